/// libFuzzer's entry point of the `assign-parsing` target: values typed at `set`, in environment variables and launch arguments (see AssignParsingFuzzCheck).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ bytes: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    FuzzEntry.run(bytes, count, AssignParsingFuzzCheck.failure(for:))
}
