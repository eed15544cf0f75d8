import Foundation
import StorableConfig
import Testing

@testable import StorableConfigEtcd

/// A member that sends what it likes (a broken member, a proxy, whatever answers on a mistyped port) must not
/// crash, hang or fool the client: each test puts a ``FakeMember`` on 127.0.0.1 in front of, or in place of, a
/// real etcd.
struct EtcdHostilePeerTests {
    /// A prefix of the test's own: stores for one cluster and prefix share one state in a process.
    private static func prefix(_ name: String = #function) -> String {
        "hostile-\(name.prefix { $0 != "(" })-\(UUID().uuidString.prefix(6))/"
    }

    // MARK: Stops the process

    @Test(arguments: [
        "HTTP/1.1 200 OK\r\nContent-Length: -5\r\n\r\n{}",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n-5\r\n{}\r\n0\r\n\r\n",
    ])
    func aNegativeLengthIsAnErrorNamingItNotACrash(answer: String) throws {
        let member = FakeMember { _ in .bytesThenClose(Array(answer.utf8)) }
        let store = try EtcdStore(endpoints: [member.url], prefix: Self.prefix(), timeout: 2)
        #expect(!store.isConnected)
        let problem = try #require(store.connectionProblem)
        #expect(problem.contains("bad Content-Length") || problem.contains("bad chunk size"))
        #expect(problem.contains(member.url.absoluteString))
        #expect(throws: (any Error).self) { try store.setValue(.string("x"), forKey: "k") }
    }

    /// A revision of Int64.max, in a read's answer or in a watch event, stops nothing, and does not pin the key:
    /// when the watch reaches a real member, which says the cluster is at an earlier revision, the prefix is read
    /// again from it and the real values and later changes arrive.
    @Test(.needsEtcd, arguments: ["read", "event"])
    func theLargestRevisionNeitherStopsTheWatchNorPinsAKey(place: String) throws {
        let cluster = try EtcdCluster()
        let prefix = Self.prefix()
        let key = prefix + "etcd.Limits.maxUploadMB"
        try cluster.put(key, "60")
        let huge = String(Int64.max)
        let kv =
            #"{"key":"\#(EtcdClient.base64(key))","value":"\#(EtcdClient.base64("666"))","mod_revision":"\#(huge)"}"#
        let liar = FakeMember { request in
            switch (place, request.path) {
            case ("read", "/v3/kv/range"):
                return .bytes(FakeMember.answer(200, #"{"header":{"revision":"\#(huge)"},"kvs":[\#(kv)],"count":"1"}"#))
            case ("event", "/v3/watch"):
                let created = #"{"result":{"header":{"revision":"1"},"created":true}}"#
                let event = #"{"result":{"header":{"revision":"\#(huge)"},"events":[{"kv":\#(kv)}]}}"#
                return .bytesThenClose(
                    FakeMember.chunkedHead + FakeMember.chunk(created) + FakeMember.chunk(event)
                        + Array("0\r\n\r\n".utf8))
            default:
                return .bytesThenClose(FakeMember.answer(404, "404 page not found"))
            }
        }
        let store = try EtcdStore(endpoints: [liar.url] + cluster.endpoints, prefix: prefix, timeout: 2)
        let limits = Limits(store: store)
        // Whatever the liar said first, the real value comes back, and later changes arrive.
        try waitFor { limits.maxUploadMB == 60 }
        try cluster.put(key, "70")
        try waitFor { limits.maxUploadMB == 70 }
        try cluster.put(key, "71")
        try waitFor { limits.maxUploadMB == 71 }
    }

    // MARK: Hangs past its timeout, or grows without bound

    /// Each answer is cut off by the request's timeout or by the size the client reads, whichever comes first;
    /// creating the store returns within its time limit, having read no more than that size.
    @Test(arguments: [
        "huge chunk", "endless body", "huge length", "endless header line", "fast endless chunks",
    ])
    func anAnswerWithoutEndIsCutOffInTime(kind: String) throws {
        let head = "HTTP/1.1 200 OK\r\n"
        let member = FakeMember { _ in
            switch kind {
            case "huge chunk":
                return .endless(
                    head: Array((head + "Transfer-Encoding: chunked\r\n\r\n7fffffffffffffff\r\n").utf8),
                    piece: [UInt8](repeating: 97, count: 65_536))
            case "endless body":
                return .endless(head: Array((head + "\r\n").utf8), piece: [UInt8](repeating: 97, count: 65_536))
            case "huge length":
                return .endless(
                    head: Array((head + "Content-Length: 99999999999999\r\n\r\n").utf8),
                    piece: [UInt8](repeating: 97, count: 65_536))
            case "endless header line":
                return .endless(head: Array((head + "X-A: ").utf8), piece: [UInt8](repeating: 97, count: 65_536))
            default:
                return .endless(
                    head: Array((head + "Transfer-Encoding: chunked\r\n\r\n").utf8),
                    piece: Array("10000\r\n".utf8) + [UInt8](repeating: 97, count: 65_536) + [13, 10])
            }
        }
        let started = Date()
        let store = try EtcdStore(endpoints: [member.url], prefix: Self.prefix(), timeout: 2)
        let elapsed = Date().timeIntervalSince(started)
        #expect(elapsed < 4, "creating the store took \(elapsed) s")
        #expect(!store.isConnected)
        let problem = store.connectionProblem ?? ""
        #expect(problem.contains("timed out") || problem.contains("longer than"), "\(problem)")
    }

    /// A member that takes the watch and then sends a byte now and then, or one line without end, has the
    /// client's timeout to create the watch (or the line limit), and the watch moves to the next member.
    @Test(.needsEtcd, arguments: ["dribble", "endless line"])
    func aWatchHeldByASlowOrEndlessMemberMovesToTheNext(kind: String) throws {
        // Pumping 64 MiB through one line, the fake member's sending included, is many times slower under
        // ThreadSanitizer, and a race check adds nothing to it: EtcdAnswerTests's line-limit test runs there.
        if kind == "endless line" && EtcdCluster.isRunningUnderThreadSanitizer { return }
        let cluster = try EtcdCluster()
        let member = FakeMember { request in
            guard request.path == "/v3/watch" else {
                return .bytesThenClose(FakeMember.answer(404, "404 page not found"))
            }
            if kind == "dribble" {
                return .dribble(FakeMember.chunkedHead + FakeMember.chunk(#"{"result":{}}"#), interval: 0.3)
            }
            let created = #"{"result":{"header":{"revision":"1"},"created":true}}"#
            let piece = Array("100000\r\n".utf8) + [UInt8](repeating: 97, count: 1 << 20) + [13, 10]
            return .endless(head: FakeMember.chunkedHead + FakeMember.chunk(created), piece: piece)
        }
        let prefix = Self.prefix()
        let limits = Limits(
            store: try EtcdStore(endpoints: [member.url] + cluster.endpoints, prefix: prefix, timeout: 2))
        try cluster.put(prefix + "etcd.Limits.maxUploadMB", "90")
        try waitFor { limits.maxUploadMB == 90 }
    }

    // MARK: Reports success for what was not stored, or gives up too early

    static let notEtcdsAnswers = [
        "<html>hello</html>", #"{"header":{"revision":"#, #"{"header":{"revision":{"x":1}},"kvs":"nope"}"#,
    ]

    /// A write answered 200 with something that is not etcd's answer was not committed: it fails, and the demo
    /// says so and exits 1.
    @Test(arguments: notEtcdsAnswers)
    func aWriteAnsweredWithSomethingElseIsAnError(body: String) throws {
        let member = FakeMember { request in
            request.path == "/v3/kv/range"
                ? .bytes(FakeMember.emptyRange()) : .bytes(FakeMember.answer(200, body))
        }
        let prefix = Self.prefix()
        let store = try EtcdStore(endpoints: [member.url], prefix: prefix, timeout: 2)
        #expect(store.isConnected)
        #expect {
            try store.setValue(.string("hacked"), forKey: "storable-config-demo.AppConfig.userName")
        } throws: { error in
            "\(error)".contains("not etcd's") || "\(error)".contains("revision")
        }
        let result = try EtcdStoreTests.runDemo([
            "--store", "etcd://127.0.0.1:\(member.port)/\(prefix)", "set", "app.userName", "hacked",
        ])
        #expect(result.status == 1)
        #expect(!result.output.contains("= hacked"))
        #expect(result.errorOutput.contains("127.0.0.1:\(member.port)"))
    }

    /// A read answered that way leaves the store unconnected, saying what the member sent, not that none
    /// answered.
    @Test(arguments: notEtcdsAnswers)
    func aReadAnsweredWithSomethingElseIsNamed(body: String) throws {
        let member = FakeMember { _ in .bytes(FakeMember.answer(200, body)) }
        let prefix = Self.prefix()
        let store = try EtcdStore(endpoints: [member.url], prefix: prefix, timeout: 2)
        #expect(!store.isConnected)
        let problem = try #require(store.connectionProblem)
        #expect(problem.contains("not etcd's") || problem.contains("revision") || problem.contains("kvs"))
        let result = try EtcdStoreTests.runDemo(["--store", "etcd://127.0.0.1:\(member.port)/\(prefix)", "list"])
        #expect(result.status == 1)
        #expect(result.errorOutput.contains(problem.prefix(40)), "\(result.errorOutput)")
    }

    /// A status that is not etcd's own answer to the request sends it to the next member: reads and writes work
    /// whichever order the endpoints are given in.
    @Test(
        .needsEtcd,
        arguments: [
            "HTTP/1.1 404 Not Found\r\nContent-Length: 18\r\n\r\n404 page not found",
            "HTTP/1.1 307 Temporary Redirect\r\nLocation: http://127.0.0.1:1/\r\nContent-Length: 0\r\n\r\n",
            "HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\n\r\n",
            "HTTP/1.1 400 Bad Request\r\nContent-Length: 11\r\n\r\nbad request",
        ])
    func aMemberThatIsNotEtcdIsPassedOver(answer: String) throws {
        let cluster = try EtcdCluster()
        let member = FakeMember { _ in .bytes(Array(answer.utf8)) }
        let prefix = Self.prefix()
        // The demo's keys start with the address's path, its leading slash included.
        try cluster.put("/" + prefix + "storable-config-demo.AppConfig.userName", #""ada""#)
        let endpoints = "127.0.0.1:\(member.port),127.0.0.1:\(cluster.members[0].clientPort)"
        let read = try EtcdStoreTests.runDemo(["--store", "etcd://\(endpoints)/\(prefix)", "get", "app.userName"])
        #expect(read.status == 0, "\(read.errorOutput)")
        #expect(read.output == "ada\n")
        let write = try EtcdStoreTests.runDemo([
            "--store", "etcd://\(endpoints)/\(prefix)", "set", "app.userName", "grace",
        ])
        #expect(write.status == 0, "\(write.errorOutput)")
        #expect(try cluster.get("/" + prefix + "storable-config-demo.AppConfig.userName") == #""grace""#)
    }

    /// etcd's own refusal (its JSON error with a gRPC code) is final: the next member would refuse it too.
    @Test func etcdsOwnRefusalIsFinal() throws {
        let refusal =
            #"{"error":"etcdserver: request is too large","message":"etcdserver: request is too large","code":3}"#
        let first = FakeMember { request in
            request.path == "/v3/kv/range" ? .bytes(FakeMember.emptyRange()) : .bytes(FakeMember.answer(400, refusal))
        }
        let second = FakeMember { _ in .bytes(FakeMember.emptyRange()) }
        let store = try EtcdStore(endpoints: [first.url, second.url], prefix: Self.prefix(), timeout: 2)
        #expect {
            try store.setValue(.string("x"), forKey: "k")
        } throws: { error in
            "\(error)".contains("too large")
        }
        #expect(!second.requests.contains { $0.path == "/v3/kv/txn" })
    }

    // MARK: Security

    /// A token that would end the header line is refused: no request carries what a member put in it.
    @Test func aTokenThatCouldAddHeadersOrRequestsIsRefused() throws {
        let token = #"tok\r\nX-Injected: yes\r\nContent-Length: 0\r\n\r\nGET /smuggled HTTP/1.1\r\nX-A: b"#
        let member = FakeMember { request in
            request.path == "/v3/auth/authenticate"
                ? .bytes(FakeMember.answer(200, #"{"header":{"revision":"1"},"token":"\#(token)"}"#))
                : .bytes(FakeMember.emptyRange())
        }
        let store = try EtcdStore(
            endpoints: [member.url], prefix: Self.prefix(), credentials: .init(user: "u", password: "p"), timeout: 2)
        #expect(!store.isConnected)
        #expect(store.connectionProblem?.contains("never issues") == true)
        // The watcher keeps trying in the background, each time asking for a token before anything else: two more
        // requests for one, and any request that used the one before has been made.
        func authentications() -> Int { member.requests.filter { $0.path == "/v3/auth/authenticate" }.count }
        let made = authentications()
        try withExtendedLifetime(store) { try waitFor { authentications() >= made + 2 } }
        #expect(!member.requests.contains { $0.head.contains("X-Injected") || $0.path.contains("smuggled") })
        #expect(member.requests.allSatisfy { $0.path == "/v3/auth/authenticate" })
    }

    @Test func aHeaderValueWithALineBreakIsNeverWritten() {
        #expect(throws: (any Error).self) {
            try HTTPConnection.request(
                path: "/v3/kv/range", host: "h", headers: [("Authorization", "a\r\nB: c")], body: Data())
        }
        #expect(throws: (any Error).self) {
            try HTTPConnection.request(path: "/v3/kv\r\n/range", host: "h", headers: [], body: Data())
        }
        #expect(EtcdClient.isPlausibleToken("KqqnFRzAEGWWBMhO.9"))
        #expect(EtcdClient.isPlausibleToken("eyJhbGciOiJSUzI1NiJ9.eyJ1c2VybmFtZSI6InJvb3QifQ.c2lnbmF0dXJl"))
        #expect(!EtcdClient.isPlausibleToken("tok en"))
        #expect(!EtcdClient.isPlausibleToken(""))
    }

    // MARK: Kept connections

    /// Unary requests share one kept connection; one that the member closed is replaced without an error.
    @Test func requestsReuseAKeptConnectionAndReplaceOneTheMemberClosed() throws {
        let closeAfterEach = Locked(false)
        let member = FakeMember { request in
            let answer =
                request.path == "/v3/kv/range"
                ? FakeMember.emptyRange() : FakeMember.answer(200, #"{"header":{"revision":"9"},"succeeded":true}"#)
            return closeAfterEach.withLock { $0 } ? .bytesThenClose(answer) : .bytes(answer)
        }
        let store = try EtcdStore(endpoints: [member.url], prefix: Self.prefix(), timeout: 2)
        for index in 0..<10 { try store.setValue(.int(Int64(index)), forKey: "k") }
        func unaryConnections() -> Set<Int32> {
            Set(member.requests.filter { $0.path != "/v3/watch" }.map(\.connection))
        }
        #expect(unaryConnections().count == 1)
        closeAfterEach.withLock { $0 = true }
        for index in 0..<5 {
            try store.setValue(.int(Int64(index)), forKey: "k")
            Thread.sleep(forTimeInterval: 0.05)
        }
        try store.reload()
        #expect(member.requests.filter { $0.path != "/v3/watch" }.count == 17)
    }
}
