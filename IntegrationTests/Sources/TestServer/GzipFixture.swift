import Foundation

/// A gzip-compressed JSON document (`{"items":[{"id":0,"name":"item 0"}, ... 200 items]}`), made once
/// with Python's gzip module, for the `/gzip` endpoint (Foundation has no gzip encoder on Linux).
public enum GzipFixture {
    /// The compressed bytes.
    public static let compressed = Data(base64Encoded: base64.joined())!
    /// How many items the document holds.
    public static let itemCount = 200

    private static let base64 = [
        "H4sIAAAAAAACA2XYO65cNxRE0akYHStg8c83FUOBACtQICd2JmjuNiSgq+5m2ifixm1ykT9e3/79+v2f18efP17f/np9lE+vv798",
        "//r6+PX7H+X189PvgZ4DvQf1OajvQXsO2nvQn4P+HoznYLwH8zmY78F6DtZ7sJ+D/R6c5+B4gVi6Yu1cvFcvLF9evxBALiAkkBsI",
        "EeQKQga5gxBCLiGkkFsIMeQaFTWqa1TUqPEt8GNwjYoa1TUqalTXqKhRXaOiRnWNihrVNSpqVNeoqFFdo6FGc42GGs01Gmq0+G/w",
        "z+EaDTWaazTUaK7RUKO5RkON5hoNNZprNNRortFRo7tGR43uGh01umt01OixV3CzcI2OGt01Omp01+io0V2jo0Z3jY4a3TUGagzX",
        "GKgxXGOgxnCNgRrDNQZqjNg7uXm6xkCN4RoDNYZrDNQYrjFQY7jGRI3pGhM1pmtM1JiuMVFjusZEjekaEzVmnCU8TFxjosZ0jYka",
        "0zUmakzXWKixXGOhxnKNhRrLNRZqLNdYqLFcY6HGco2FGivOVh6urrFQY7nGQo3lGhs1tmts1NiusVFju8ZGje0aGzW2a2zU2K6x",
        "UWO7xkaNHdYgNlxjo8Z2jYMaxzUOahzXOKhxXOOgxnGNgxrHNQ5qHNc4qHFc46DGcY2DGifsRXylvi5+hb8KAVZCYIUEK2GwQoSV",
        "UFghw0o4rBBiJSRWSLESFivEWAmNFXKshMcKQVai0AXUh1AvokahC6mp1Iup6dQLqinVi6pp1QurqdWLq+nVC6wp1ousYVYRrQq1",
        "imxVTcVfjI9CpKvCriJeFXoV+arwqwhYhWBFwioMKyJWoViRsQrHipBVSFakrMKyImbV8qZzXXWiEEGrEK1IWoVpRdQqVCuyVuFa",
        "EbYK2Yq0VdhWxK1CtyJvFb4VgasQrkhc9bwNXtfBKETmKpwrQlchXZG6CuuK2FVoV+SuwrsieBXiFcmrMK+IXoV6RfYq3CvCVyNv",
        "zNeVOQoRvwr9ivxV+FcEsELAIoEVBhYRrFCwyGCFg0UIKyQsUlhhYRHDCg2LHNbMV4XrWSEKkcQKE4soVqhYZLHCxSKMFTIWaayw",
        "sYhjhY5FHit8LAJZIWSRyAoji0jWypeX6+klChHKCimLVFZYWcSyQssilxVeFsGsELNIZoWZRTQr1CyyWeFmEc4KOYt01s7Xqet5",
        "KgqRzwo/i4BWCFoktMLQIqIVihYZrXC0CGmFpEVKKywtYlqhaZHTCk+LoNbJF7zrCe//Qp9//geOrjg31xUAAA==",
    ]
}
