/// libFuzzer's entry point of the `evolving-values` target: stored trees read by a newer type (see
/// EvolvingValuesFuzzCheck).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ bytes: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    FuzzEntry.run(bytes, count, EvolvingValuesFuzzCheck.failure(for:))
}
