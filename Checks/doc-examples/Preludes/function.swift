// Statements that make their own configs, inside a function that is not isolated to an actor (a server's or a
// library's code), so that the data-race checks apply as they would there.
import Foundation
import StorableConfig

func example() async throws {
    // example
}
