/// libFuzzer's entry point of the `iso8601` target: the dates' text (see ISO8601FuzzCheck).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ bytes: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    FuzzEntry.run(bytes, count, ISO8601FuzzCheck.failure(for:))
}
