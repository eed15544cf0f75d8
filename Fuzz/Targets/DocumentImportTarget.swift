/// libFuzzer's entry point of the `document-import` target: a settings document to import (see DocumentImportFuzzCheck).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ bytes: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    FuzzEntry.run(bytes, count, DocumentImportFuzzCheck.failure(for:))
}
