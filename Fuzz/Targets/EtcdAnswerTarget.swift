/// libFuzzer's entry point of the `etcd-answer` target: the JSON in etcd's answers (see EtcdAnswerFuzzCheck).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ bytes: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    FuzzEntry.run(bytes, count, EtcdAnswerFuzzCheck.failure(for:))
}
