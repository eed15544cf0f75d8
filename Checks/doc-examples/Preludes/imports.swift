// A block that needs only the library and Foundation, at the top level of a program.
import Foundation
import StorableConfig

// example
