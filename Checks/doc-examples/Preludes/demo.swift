// The types that the demo's configs use (Sources/storable-config-demo), for Docs/Demo.md's listing of them.
import Foundation
import StorableConfig

enum Theme: String, Codable, Sendable, CaseIterable { case system, light, dark }

struct WindowFrame: Codable, Sendable, Equatable {
    var width: Int
    var height: Int
    var isFullScreen: Bool
}

struct Income: Codable, Identifiable, Sendable {
    var id: String
    var name: String
    var amount: Int
    var order: Int
}

// example
