import Foundation
import Networking
import NetworkingTestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// An endpoint of the API the background transfer tests talk to.
struct BackgroundAPI: Endpoint {
    var baseURL = URL(string: "https://api.example.com")!
    var path: String
    var method: HTTPMethod = .post
    var body: RequestBody = .none
    var queryItems: [URLQueryItem] = []
    var maximumResponseSize: Int?

    static func upload(_ text: String = "video bytes", path: String = "/v1/videos") -> BackgroundAPI {
        BackgroundAPI(path: path, body: .data(Data(text.utf8), contentType: "video/mp4"))
    }

    static func download(_ path: String = "/v1/files/report.pdf", maximumSize: Int? = nil) -> BackgroundAPI {
        BackgroundAPI(path: path, method: .get, maximumResponseSize: maximumSize)
    }
}

/// An app on a simulated system: the same identifier and folder at every launch.
struct BackgroundApp {
    let server = MockServer()
    let system: SimulatedBackgroundSystem
    let folder: URL
    let identifier = "com.example.tests.transfers"

    init() throws {
        system = SimulatedBackgroundSystem(server: server)
        folder = try makeScratchFolder()
    }

    /// A launch: a new service on a new session of the same system, started; `beforeStart` runs first
    /// (the app delegate's `handleEventsForBackgroundURLSession` can come before the session is rebuilt).
    func launch(
        authenticator: AuthInterceptor? = nil, beforeStart: (BackgroundTransferService) -> Void = { _ in }
    ) async throws -> BackgroundTransferService {
        let service = try BackgroundTransferService(session: system.launch(identifier: identifier), folder: folder, authenticator: authenticator)
        beforeStart(service)
        try await service.start()
        return service
    }

    /// The app is gone: the system keeps its tasks, and the service's folder is free for the next launch.
    func terminate(_ service: BackgroundTransferService) async {
        system.terminateApp()
        await service.stop()
    }

    var recordsFolder: URL { folder.appendingPathComponent("records") }

    /// The names of the files in the records folder.
    func recordFiles() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: recordsFolder.path).sorted()
    }

    func cleanUp() {
        try? FileManager.default.removeItem(at: folder)
        try? FileManager.default.removeItem(at: system.folder)
    }
}

/// An interceptor signed in as `account` with `token`, for `https://api.example.com`.
func backgroundAuthenticator(account: String = "A", token: String = "token-A1") -> AuthInterceptor {
    AuthInterceptor(
        baseURL: URL(string: "https://api.example.com")!,
        store: InMemoryCredentialStore(Credential(accessToken: token, refreshToken: "refresh-\(account)", account: account)),
        refresh: { credential, _ in credential })
}

/// The next `count` outcomes of `service`.
func nextOutcomes(_ count: Int, of iterator: inout AsyncStream<BackgroundTransferOutcome>.Iterator) async -> [BackgroundTransferOutcome] {
    var outcomes: [BackgroundTransferOutcome] = []
    while outcomes.count < count, let outcome = await iterator.next() { outcomes.append(outcome) }
    return outcomes
}

extension BackgroundTransferOutcome {
    /// The response when finished.
    var response: BackgroundTransferResponse? {
        if case .finished(_, let response) = self { return response }
        return nil
    }

    /// The error when failed.
    var error: BackgroundTransferError? {
        if case .failed(_, let error) = self { return error }
        return nil
    }
}
