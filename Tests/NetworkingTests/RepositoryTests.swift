import Foundation
import Networking
import NetworkingTestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

// Twin of README.md's quick example: keep the two identical.
enum UserAPI: Endpoint {
    case user(id: Int)
    case rename(id: Int, name: String)

    var baseURL: URL { URL(string: "https://api.example.com/v1")! }
    var path: String {
        switch self {
        case .user(let id), .rename(let id, _): return "/users/\(id)"
        }
    }
    var method: HTTPMethod {
        if case .rename = self { return .patch }
        return .get
    }
    var body: RequestBody {
        guard case .rename(_, let name) = self else { return .none }
        return .json(["name": name])
    }
}

struct UserRepository {
    let network: any NetworkProviding   // injected: a NetworkProvider in the app, one wired to a mock in tests

    func user(id: Int) async throws -> User {
        try await network.request(UserAPI.user(id: id), as: User.self)
    }

    func rename(id: Int, to name: String) async throws {
        try await network.request(UserAPI.rename(id: id, name: name))
    }
}

/// README's app wiring, compiled (not run: it would reach for the network).
func readmeAppWiring() -> UserRepository {
    let repository = UserRepository(network: NetworkProvider())
    return repository
}

@Suite("Repository injection")
struct RepositoryTests {
    @Test func repositoryWorksWithAProviderWiredToTheMock() async throws {
        // GIVEN a repository injected with a provider wired to the mock
        let server = MockServer()
        server.stub(.get, "/v1/users/7", .json(User(id: 7, name: "Lee")))
        server.stub(.patch, "/v1/users/7", .status(204))
        let repository = UserRepository(network: server.makeProvider())
        // WHEN it loads and renames a user
        #expect(try await repository.user(id: 7).name == "Lee")
        let user = try await repository.user(id: 7)
        try await repository.rename(id: 7, to: "Park")
        // THEN it decoded the user and sent the rename as JSON
        #expect(user == User(id: 7, name: "Lee"))
        let patch = try #require(server.requests(.patch, "/v1/users/7").first)
        #expect(try patch.decodeBody(as: [String: String].self) == ["name": "Park"])
        #expect(patch.header("Content-Type") == "application/json")
    }
}

@Suite("Error descriptions")
struct ErrorDescriptionTests {
    @Test func descriptionsNeverQuoteValuesFromTheWire() async throws {
        // GIVEN a body whose undecodable value is a secret
        let server = MockServer()
        server.stub(.get, "/v1/users/1", .json(raw: #"{"id":1,"name":null,"token":"s3cr3t-token"}"#))
        server.stub(.get, "/v1/other", .failure(URLError(.timedOut, userInfo: [NSURLErrorFailingURLErrorKey: URL(string: "https://x/?token=s3cr3t-token")!])))
        let provider = server.makeProvider(interceptor: FixedRetrier(result: .retry), maximumAttempts: 2)
        var descriptions: [String] = []
        do { _ = try await provider.request(TestEndpoint(), as: User.self) } catch { descriptions.append("\(error)") }
        do { _ = try await provider.response(TestEndpoint(path: "/other")) } catch {
            descriptions.append("\(error)")
            descriptions.append(error.localizedDescription)
        }
        // THEN every description says what happened without the secret
        #expect(descriptions.count == 3)
        #expect(descriptions[0].contains("User") && descriptions[0].contains("name"))
        #expect(descriptions[1].contains("2 attempts") && descriptions[1].contains("-1001"))
        for description in descriptions {
            #expect(!description.contains("s3cr3t"))
        }
    }
}
