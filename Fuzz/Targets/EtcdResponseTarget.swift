/// libFuzzer's entry point of the `etcd-response` target: etcd's HTTP/1.1 answers (see EtcdResponseFuzzCheck).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ bytes: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    FuzzEntry.run(bytes, count, EtcdResponseFuzzCheck.failure(for:))
}
