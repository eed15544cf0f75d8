/// libFuzzer's entry point of the `dotenv` target: `.env` files that file sources read (see DotEnvFuzzCheck).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ bytes: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    FuzzEntry.run(bytes, count, DotEnvFuzzCheck.failure(for:))
}
