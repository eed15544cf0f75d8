import Foundation
import StorableConfig
import Testing

/// A config's name, and so every key derived from it, is what `String(describing:)` prints for its class,
/// whatever the class's shape (the library takes it from `_typeName`, which does not scan conformances).
struct ConfigNameTests {
    enum Outer {
        final class NestedConfig: StorableConfig { @Setting var value = 0 }
    }
    class GenericConfig<Tag>: StorableConfig { @Setting var value = 0 }
    private final class PrivateConfig: StorableConfig { @Setting var value = 0 }
    class BaseConfig: StorableConfig { @Setting var value = 0 }
    final class DerivedConfig: BaseConfig { @Setting var more = 0 }

    @Test func theNameIsWhatStringDescribingPrintsForEveryShapeOfClass() {
        final class LocalConfig: StorableConfig { @Setting var value = 0 }
        let types: [StorableConfig.Type] = [
            Outer.NestedConfig.self, GenericConfig<Int>.self, GenericConfig<[String: Int]>.self, PrivateConfig.self,
            BaseConfig.self, DerivedConfig.self, LocalConfig.self,
        ]
        for type in types {
            #expect(type.configName == String(describing: type))
            let config = type.init(store: InMemoryStore())
            #expect(config.keys.allSatisfy { $0.hasPrefix("\(type.namespace).\(String(describing: type)).") })
        }
    }
}
