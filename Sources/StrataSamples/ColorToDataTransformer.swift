import Foundation
import StrataStore

/// Turns a ``SampleColor`` into 32 bytes (four big-endian IEEE doubles) and back.
public struct ColorToDataTransformer: ValueTransformer {
    /// The name the model's `coverColor` attribute uses.
    public static let transformerName = "ColorToDataTransformer"

    /// Creates the transformer.
    public init() {}

    /// ``transformerName``.
    public var name: String { Self.transformerName }

    /// Encodes a ``SampleColor``.
    public func transformedValue(_ value: any Sendable) throws -> Data {
        guard let color = value as? SampleColor else {
            throw TransformError(message: "ColorToDataTransformer takes a SampleColor, not \(type(of: value))")
        }
        var data = Data(capacity: 32)
        for component in [color.red, color.green, color.blue, color.alpha] {
            withUnsafeBytes(of: component.bitPattern.bigEndian) { data.append(contentsOf: $0) }
        }
        return data
    }

    /// Decodes 32 bytes into a ``SampleColor``.
    public func reverseTransformedValue(_ data: Data) throws -> any Sendable {
        guard data.count == 32 else {
            throw TransformError(message: "ColorToDataTransformer expects 32 bytes, got \(data.count)")
        }
        let bytes = [UInt8](data)
        var components: [Double] = []
        for i in 0..<4 {
            var bits: UInt64 = 0
            for byte in bytes[(i * 8)..<(i * 8 + 8)] { bits = bits << 8 | UInt64(byte) }
            components.append(Double(bitPattern: bits))
        }
        return SampleColor(red: components[0], green: components[1], blue: components[2], alpha: components[3])
    }

    /// A transform failure.
    public struct TransformError: Error, CustomStringConvertible {
        /// What went wrong.
        public var message: String
        /// The message.
        public var description: String { message }
    }
}
