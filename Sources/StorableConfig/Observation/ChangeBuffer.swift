/// How many elements a `changes` stream holds for a consumer that has not read them yet.
///
/// Past it, the oldest are dropped, so a consumer that stops reading costs at most this many elements, and
/// one that falls behind still ends on the last change. A million assignments with an idle consumer kept
/// every one (114 MB) before.
enum ChangeBuffer {
    static let limit = 1_000
}
