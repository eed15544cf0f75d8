// The record type of Docs/Records.md; the block at the top level of a program.
import Foundation
import StorableConfig

struct Income: Codable, Identifiable, Sendable {
    var id: String
    var name: String
    var amount: Int
    var order: Int
}

// example
