/// libFuzzer's entry point of the `json-text` target: the settings file's parser (see JSONTextFuzzCheck).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ bytes: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    FuzzEntry.run(bytes, count, JSONTextFuzzCheck.failure(for:))
}
