import Foundation
import Networking
import Testing

@testable import NetworkingTestSupport

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A `GET` of the resource with `headers`, as the mock records it.
private func get(_ headers: [String: String] = [:], method: String = "GET") -> RecordedRequest {
    var request = URLRequest(url: URL(string: "https://api.example.com/v1/files/big.bin")!)
    request.httpMethod = method
    for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
    return RecordedRequest(request)
}

/// Ten bytes, `0...9`.
private let tenBytes = Data(0..<10)

@Suite("MockResource answers Range and If-Range (RFC 9110 §14.2, §13.1.5)", SuiteTimeLimit.oneMinute)
struct MockResourceRangeAnswerTests {
    /// A `Range`, and the `Content-Range` and body of its 206 for ten bytes (RFC 9110 §14.1.2, §14.4).
    static let satisfiable: [(range: String, contentRange: String, body: Data)] = [
        ("bytes=4-", "bytes 4-9/10", Data(4..<10)),
        ("bytes=2-5", "bytes 2-5/10", Data(2..<6)),
        ("bytes=0-0", "bytes 0-0/10", Data([0])),
        ("bytes=7-99", "bytes 7-9/10", Data(7..<10)),
        ("bytes=-3", "bytes 7-9/10", Data(7..<10)),
        ("bytes=-50", "bytes 0-9/10", tenBytes),
        ("bytes=9-", "bytes 9-9/10", Data([9])),
        ("Bytes= 3-4 ", "bytes 3-4/10", Data(3..<5)),
    ]

    @Test(arguments: satisfiable)
    func aSingleSatisfiableRangeGets206WithItsContentRangeRFC9110_15_3_7(range: String, contentRange: String, body: Data) {
        // GIVEN a ten-byte resource
        let resource = MockResource(body: tenBytes, etag: "\"v1\"", headers: ["Content-Type": "application/octet-stream"])
        // WHEN a GET asks for the range
        let answer = resource.response(to: get(["Range": range]))
        // THEN a 206 holds exactly those bytes, says which, and keeps the representation's headers
        #expect(answer.statusCode == 206)
        #expect(answer.headers["Content-Range"] == contentRange)
        #expect(answer.headers["Content-Length"] == String(body.count))
        #expect(answer.headers["ETag"] == "\"v1\"")
        #expect(answer.headers["Content-Type"] == "application/octet-stream")
        #expect(answer.body == body)
        #expect(resource.partialResponses == 1 && resource.fullResponses == 0)
    }

    @Test(arguments: ["bytes=10-", "bytes=11-20", "bytes=-0", "bytes=99999999999999999999999-"])
    func aRangeThatStartsPastTheEndGets416WithTheCompleteLengthRFC9110_15_5_17(range: String) {
        // GIVEN a ten-byte resource
        let resource = MockResource(body: tenBytes, etag: "\"v1\"", headers: ["Content-Type": "application/octet-stream"])
        // WHEN a GET asks for a range it cannot satisfy
        let answer = resource.response(to: get(["Range": range]))
        // THEN a 416 without a body names the complete length (RFC 9110 §14.4)
        #expect(answer.statusCode == 416)
        #expect(answer.headers["Content-Range"] == "bytes */10")
        #expect(answer.headers["Content-Type"] == nil)
        #expect(answer.body.isEmpty)
        #expect(resource.unsatisfiableRangeResponses == 1 && resource.partialResponses == 0 && resource.fullResponses == 0)
    }

    @Test(arguments: ["bytes=0-", "bytes=-1", "bytes=0-0"])
    func anEmptyBodySatisfiesNoRangeRFC9110_14_1_2(range: String) {
        let resource = MockResource(body: Data(), etag: "\"v1\"")
        let answer = resource.response(to: get(["Range": range]))
        #expect(answer.statusCode == 416)
        #expect(answer.headers["Content-Range"] == "bytes */0")
    }

    /// `Range` values a server may ignore (RFC 9110 §14.2): several ranges, another unit, invalid syntax.
    static let ignored = ["bytes=0-1,4-5", "bytes=0-1, -2", "items=0-1", "bytes=5-2", "bytes=a-", "bytes=", "bytes=-", "0-1"]

    @Test(arguments: ignored)
    func severalRangesOrOneThatDoesNotParseGetTheWholeBodyWith200RFC9110_14_2(range: String) {
        let resource = MockResource(body: tenBytes, etag: "\"v1\"")
        let answer = resource.response(to: get(["Range": range]))
        #expect(answer.statusCode == 200)
        #expect(answer.headers["Content-Range"] == nil)
        #expect(answer.body == tenBytes)
        #expect(resource.fullResponses == 1 && resource.fullResponsesToRanges == 1)
    }

    @Test func onlyAGetIsAnsweredWithARangeRFC9110_14_2() {
        let resource = MockResource(body: tenBytes, etag: "\"v1\"")
        let head = resource.response(to: get(["Range": "bytes=2-"], method: "HEAD"))
        let post = resource.response(to: get(["Range": "bytes=2-"], method: "POST"))
        #expect(head.statusCode == 200 && head.body.isEmpty && head.headers["Content-Range"] == nil)
        #expect(post.statusCode == 200 && post.body == tenBytes)
        #expect(resource.partialResponses == 0 && resource.fullResponsesToRanges == 0)
    }

    /// `If-Range` values and whether they name the resource's version (`"v1"`, last modified then).
    static let ifRanges: [(ifRange: String, matches: Bool)] = [
        ("\"v1\"", true),
        (MockResource.httpDate(Date(timeIntervalSince1970: 784_887_141)), true),
        ("\"v0\"", false),
        ("W/\"v1\"", false),
        (MockResource.httpDate(Date(timeIntervalSince1970: 784_887_142)), false),
    ]

    @Test(arguments: ifRanges)
    func anIfRangeForTheCurrentStrongValidatorGets206AnyOtherTheWholeBodyRFC9110_13_1_5(ifRange: String, matches: Bool) {
        // GIVEN a resource with a strong ETag and a Last-Modified date
        let resource = MockResource(body: tenBytes, etag: "\"v1\"", lastModified: Date(timeIntervalSince1970: 784_887_141))
        // WHEN a range is asked for with this If-Range
        let answer = resource.response(to: get(["Range": "bytes=4-", "If-Range": ifRange]))
        // THEN the current version's validator gets the range; another (or a weak tag) gets the whole body
        #expect(answer.statusCode == (matches ? 206 : 200))
        #expect(answer.body == (matches ? Data(4..<10) : tenBytes))
        #expect(resource.fullResponsesToRanges == (matches ? 0 : 1))
    }

    @Test func aWeakCurrentETagNeverMatchesIfRangeRFC9110_8_8_3_2() {
        let resource = MockResource(body: tenBytes, etag: "W/\"v1\"")
        #expect(resource.response(to: get(["Range": "bytes=4-", "If-Range": "\"v1\""])).statusCode == 200)
        #expect(resource.response(to: get(["Range": "bytes=4-", "If-Range": "W/\"v1\""])).statusCode == 200)
    }

    @Test func aChangedVersionAnswersTheOldValidatorWithTheWholeNewBody() {
        // GIVEN a resource replaced by version 2 after a client kept version 1's validator
        let resource = MockResource(body: tenBytes, etag: "\"v1\"")
        resource.update(body: Data(repeating: 7, count: 12), etag: "\"v2\"")
        // WHEN the client asks for the rest of version 1
        let answer = resource.response(to: get(["Range": "bytes=4-", "If-Range": "\"v1\""]))
        // THEN it gets version 2, whole (RFC 9110 §13.1.5)
        #expect(answer.statusCode == 200 && answer.body == Data(repeating: 7, count: 12) && answer.headers["ETag"] == "\"v2\"")
    }

    @Test func aMatchingIfNoneMatchIsAnswered304BeforeAnyRangeRFC9110_13_2_2() {
        let resource = MockResource(body: tenBytes, etag: "\"v1\"")
        let answer = resource.response(to: get(["Range": "bytes=4-", "If-None-Match": "\"v1\""]))
        #expect(answer.statusCode == 304)
        #expect(resource.notModifiedResponses == 1 && resource.partialResponses == 0)
    }

    @Test func aServerThatIgnoresRangesAnswersTheWholeBody() {
        let resource = MockResource(body: tenBytes, etag: "\"v1\"")
        resource.rangeBehaviour = .ignoringRanges
        let answer = resource.response(to: get(["Range": "bytes=4-", "If-Range": "\"v1\""]))
        #expect(answer.statusCode == 200 && answer.body == tenBytes && answer.headers["Content-Range"] == nil)
        #expect(resource.response(to: get(["Range": "bytes=40-"])).statusCode == 200)
        #expect(resource.fullResponsesToRanges == 2 && resource.unsatisfiableRangeResponses == 0)
    }

    @Test func aServerThatIgnoresIfRangeAnswersTheCurrentVersionsBytesWhateverTheValidator() {
        let resource = MockResource(body: tenBytes, etag: "\"v2\"")
        resource.rangeBehaviour = .ignoringIfRange
        let answer = resource.response(to: get(["Range": "bytes=4-", "If-Range": "\"v1\""]))
        #expect(answer.statusCode == 206 && answer.body == Data(4..<10))
        #expect(answer.headers["Content-Range"] == "bytes 4-9/10" && answer.headers["ETag"] == "\"v2\"")
    }

    /// A `Range`, a cap, and the `Content-Range` and body of the capped 206 for ten bytes.
    static let capped: [(range: String, cap: Int, contentRange: String, body: Data)] = [
        ("bytes=2-", 3, "bytes 2-4/10", Data(2..<5)), ("bytes=8-", 3, "bytes 8-9/10", Data(8..<10)),
        ("bytes=-6", 2, "bytes 4-5/10", Data(4..<6)), ("bytes=1-", 0, "bytes 1-1/10", Data([1])),
        ("bytes=2-", Int.max, "bytes 2-9/10", Data(2..<10)),
    ]

    @Test(arguments: capped)
    func aCappedServerSendsAtMostItsCapWithATrueContentRangeRFC9110_14_4(range: String, cap: Int, contentRange: String, body: Data) {
        let resource = MockResource(body: tenBytes, etag: "\"v1\"")
        resource.rangeBehaviour = .capped(at: cap)
        let answer = resource.response(to: get(["Range": range]))
        #expect(answer.statusCode == 206)
        #expect(answer.headers["Content-Range"] == contentRange)
        #expect(answer.headers["Content-Length"] == String(body.count))
        #expect(answer.body == body)
    }

    @Test func aServerThatOmitsTheCompleteLengthSendsAStarRFC9110_14_4() {
        let resource = MockResource(body: tenBytes, etag: "\"v1\"")
        resource.rangeBehaviour = MockResource.RangeBehaviour(maximumRangeLength: 4, omitsCompleteLength: true)
        #expect(resource.response(to: get(["Range": "bytes=2-"])).headers["Content-Range"] == "bytes 2-5/*")
        let refused = resource.response(to: get(["Range": "bytes=10-"]))
        #expect(refused.statusCode == 416 && refused.headers["Content-Range"] == nil)
    }

    @Test func aRequestWithoutARangeIsAnsweredAsBefore() {
        let resource = MockResource(body: tenBytes, etag: "\"v1\"")
        let answer = resource.response(to: get(["If-Range": "\"v1\""]))
        #expect(answer.statusCode == 200 && answer.body == tenBytes && answer.headers["Content-Range"] == nil)
        #expect(answer.headers["Content-Length"] == nil)
        #expect(resource.fullResponses == 1 && resource.fullResponsesToRanges == 0)
    }
}
