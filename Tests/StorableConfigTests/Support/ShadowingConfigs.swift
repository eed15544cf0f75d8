// A private setting in a superclass is invisible in a subclass declared in another file, so the subclass
// can declare a setting of the same name: the two then derive one key.
import StorableConfig

class ShadowedBase: StorableConfig {
    override class var namespace: String { "ns" }
    @Setting private var token = ""
}
