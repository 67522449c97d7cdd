#!/usr/bin/env bash
# Regenerates the certificate fixtures of the server-trust tests (ServerTrustPinTests and the others):
#
#   bash Tests/NetworkingTests/Fixtures/Certificates/make-certificates.sh
#
# Two chains, every key type a pin must be read from, as leaf, intermediate or root:
#   chain A: root-a (RSA 4096) → intermediate-a (EC P-384) → leaf-a-rsa2048 (RSA 2048), leaf-a-p256 (EC P-256)
#   chain B: root-b (EC P-256) → intermediate-b (RSA 2048) → leaf-b-rsa4096 (RSA 4096), leaf-b-p384 (EC P-384)
#   leaf-b-v1-p256: an X.509 version 1 certificate (no extensions, no version field), signed by intermediate-b
#
# For each certificate NAME it writes NAME.der (the certificate) and NAME.spki.der (its
# SubjectPublicKeyInfo, as openssl writes it), and appends "NAME PIN" to pins.txt, where PIN is what
# openssl itself computes:
#
#   openssl x509 -pubkey -noout | openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | base64
#
# so the tests compare our DER parsing and SHA-256 with a third party, not with our own output. The
# private keys live in a temporary folder and are deleted: nothing here can sign anything. Every run makes
# new keys, so new pins: commit the whole folder after running it.
set -euo pipefail
cd "$(dirname "$0")"
command -v openssl >/dev/null || { echo "make-certificates: openssl is missing"; exit 1; }

keys=$(mktemp -d)
trap 'rm -rf "$keys"' EXIT
days=36500

key() {   # key NAME ALGORITHM-OPTIONS...
    local name=$1
    shift
    openssl genpkey "$@" -out "$keys/$name.key" 2>/dev/null
}

extensions() {   # extensions KIND HOST: an extension file for a CA or a TLS server
    if [ "$1" = ca ]; then
        printf 'basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign,cRLSign\nsubjectKeyIdentifier=hash\nauthorityKeyIdentifier=keyid:always\n'
    else
        printf 'basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\nsubjectAltName=DNS:%s\nsubjectKeyIdentifier=hash\nauthorityKeyIdentifier=keyid:always\n' "$2"
    fi
}

root() {   # root NAME SUBJECT
    openssl req -x509 -new -key "$keys/$1.key" -subj "$2" -days "$days" -sha256 \
        -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" \
        -out "$keys/$1.pem"
}

signed() {   # signed NAME SUBJECT ISSUER KIND [HOST]: a certificate for NAME's key, signed by ISSUER
    openssl req -new -key "$keys/$1.key" -subj "$2" -out "$keys/$1.csr"
    local options=()
    if [ "$4" != v1 ]; then
        extensions "$4" "${5:-}" >"$keys/$1.ext"
        options=(-extfile "$keys/$1.ext")
    fi
    openssl x509 -req -in "$keys/$1.csr" -CA "$keys/$3.pem" -CAkey "$keys/$3.key" -CAcreateserial \
        -days "$days" -sha256 "${options[@]}" -out "$keys/$1.pem" 2>/dev/null
}

key root-a -algorithm RSA -pkeyopt rsa_keygen_bits:4096
key intermediate-a -algorithm EC -pkeyopt ec_paramgen_curve:P-384
key leaf-a-rsa2048 -algorithm RSA -pkeyopt rsa_keygen_bits:2048
key leaf-a-p256 -algorithm EC -pkeyopt ec_paramgen_curve:P-256
key root-b -algorithm EC -pkeyopt ec_paramgen_curve:P-256
key intermediate-b -algorithm RSA -pkeyopt rsa_keygen_bits:2048
key leaf-b-rsa4096 -algorithm RSA -pkeyopt rsa_keygen_bits:4096
key leaf-b-p384 -algorithm EC -pkeyopt ec_paramgen_curve:P-384
key leaf-b-v1-p256 -algorithm EC -pkeyopt ec_paramgen_curve:P-256

root root-a "/O=Networking Tests/CN=Test Root A (RSA 4096)"
signed intermediate-a "/O=Networking Tests/CN=Test Intermediate A (EC P-384)" root-a ca
signed leaf-a-rsa2048 "/O=Networking Tests/CN=api.example.com" intermediate-a leaf api.example.com
signed leaf-a-p256 "/O=Networking Tests/CN=cdn.example.com" intermediate-a leaf cdn.example.com
root root-b "/O=Networking Tests/CN=Test Root B (EC P-256)"
signed intermediate-b "/O=Networking Tests/CN=Test Intermediate B (RSA 2048)" root-b ca
signed leaf-b-rsa4096 "/O=Networking Tests/CN=login.example.org" intermediate-b leaf login.example.org
signed leaf-b-p384 "/O=Networking Tests/CN=files.example.org" intermediate-b leaf files.example.org
signed leaf-b-v1-p256 "/O=Networking Tests/CN=legacy.example.org" intermediate-b v1

names=(root-a intermediate-a leaf-a-rsa2048 leaf-a-p256 root-b intermediate-b leaf-b-rsa4096 leaf-b-p384 leaf-b-v1-p256)
: >pins.txt
for name in "${names[@]}"; do
    openssl x509 -in "$keys/$name.pem" -outform der -out "$name.der"
    openssl x509 -in "$keys/$name.pem" -pubkey -noout | openssl pkey -pubin -outform der -out "$name.spki.der"
    pin=$(openssl x509 -in "$keys/$name.pem" -pubkey -noout | openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | base64)
    echo "$name $pin" >>pins.txt
done
echo "make-certificates: wrote ${#names[@]} certificates and pins.txt"
