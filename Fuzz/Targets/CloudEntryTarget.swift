/// libFuzzer's entry point of the `cloud-entry` target: cloud values, their stamps and their merge (see
/// CloudEntryFuzzCheck).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ bytes: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    FuzzEntry.run(bytes, count, CloudEntryFuzzCheck.failure(for:))
}
