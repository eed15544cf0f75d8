/// libFuzzer's entry point of the `etcd-pem` target: a CA file's PEM text (see PEMFuzzCheck).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ bytes: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    FuzzEntry.run(bytes, count, PEMFuzzCheck.failure(for:))
}
