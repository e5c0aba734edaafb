import Foundation
import Testing
import StrataModel
@testable import StrataStore

@Suite struct StoreOpeningTests {
    let model = ObjectModel(name: "M", entities: [
        EntityDescription(name: "Book", attributes: [
            .init(name: "cover", type: .transformable, isOptional: true, valueTransformerName: "ColorToDataTransformer"),
        ]),
        EntityDescription(name: "Note"),
    ], configurations: [ConfigurationDescription(name: "Books", entities: ["Book"])])

    @Test func unknownTransformerIsReportedByAttribute() {
        do {
            try StoreOpening.checkTransformers(.inMemory(configuration: "Books"), model: model, transformers: ValueTransformerRegistry())
            Issue.record("expected an error")
        } catch let error as StrataError {
            #expect(error.code == .storeOpen)
            #expect(error.details == ["Book.cover uses unknown value transformer 'ColorToDataTransformer'"])
        } catch {
            Issue.record("\(error)")
        }
    }

    @Test func unknownConfigurationIsRefused() {
        #expect(throws: StrataError.self) { try StoreOpening.checkConfiguration(.inMemory(configuration: "Nope"), model: model) }
        #expect(StoreOpening.entityNames(configuration: "Books", model: model) == ["Book"])
        #expect(StoreOpening.entityNames(configuration: nil, model: model) == ["Book", "Note"])
    }
}
