import Foundation

/// Loads models from Xcode's model files.
///
/// Accepts a `Name.xcdatamodeld` folder (the version named by its
/// `.xccurrentversion` plist, else its only `.xcdatamodel`), a
/// `Version.xcdatamodel` folder, or a bare `contents` XML file of any name.
///
/// Loading is lenient: unknown elements and attributes are ignored and
/// values that do not parse become ``ObjectModel/loadDiagnostics``, so that
/// ``ObjectModel/structuralDiagnostics()`` reports every problem at once.
/// Only files that cannot be read as a model at all throw
/// (``StrataError/Code/modelUnreadable``, naming the file, and the line and
/// column for XML errors).
///
/// ```swift
/// let model = try XcodeModelLoader.load(contentsOf: URL(fileURLWithPath: "Books.xcdatamodeld"))
/// let problems = model.structuralDiagnostics()
/// ```
public enum XcodeModelLoader {
    /// Loads the model at `url`: an `.xcdatamodeld` or `.xcdatamodel` folder,
    /// or a `contents` file.
    ///
    /// - Throws: ``StrataError`` with code ``StrataError/Code/modelUnreadable``
    ///   when the path does not exist, names no single model version, or is
    ///   not an Xcode model.
    public static func load(contentsOf url: URL) throws -> ObjectModel {
        let path = url.path
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw StrataError(.modelUnreadable, "\(path): no such file or folder")
        }
        guard isDirectory.boolValue else {
            return try load(data: readFile(url), fileName: path)
        }
        let modelFolder = try versionFolder(for: url)
        let contents = modelFolder.appendingPathComponent("contents")
        var contentsIsDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: contents.path, isDirectory: &contentsIsDirectory),
              !contentsIsDirectory.boolValue else {
            throw StrataError(.modelUnreadable, "\(modelFolder.path): not an Xcode model (no 'contents' file inside)")
        }
        return try load(data: readFile(contents), fileName: contents.path)
    }

    /// Loads a model from the XML text of a `contents` file.
    ///
    /// `fileName` is used in messages and as ``ObjectModel/sourceFile``; the
    /// model's name is the enclosing `.xcdatamodel` folder's name when
    /// `fileName` is `…/Name.xcdatamodel/contents`, else the file's name
    /// without its extension.
    ///
    /// - Throws: ``StrataError`` with code ``StrataError/Code/modelUnreadable``
    ///   when the data is not well-formed XML or its root is not `<model>`.
    public static func load(data: Data, fileName: String) throws -> ObjectModel {
        let root: XMLElementNode
        switch XMLTreeBuilder.parse(data) {
        case .success(let node):
            root = node
        case .failure(let failure):
            var location = fileName
            if let line = failure.line {
                location += ":\(line)"
                if let column = failure.column { location += ":\(column)" }
            }
            throw StrataError(.modelUnreadable, "\(location): \(failure.message)")
        }
        guard root.name == "model" else {
            throw StrataError(.modelUnreadable, "\(fileName):\(root.line): not an Xcode model (root element is <\(root.name)>, expected <model>)")
        }
        var decoder = XcodeModelDecoder(file: fileName)
        return decoder.decodeModel(root, name: modelName(forFile: fileName))
    }

    /// The model name for a contents file: `Name` for `…/Name.xcdatamodel/contents`,
    /// else the file name without its extension.
    static func modelName(forFile fileName: String) -> String {
        let url = URL(fileURLWithPath: fileName)
        let parent = url.deletingLastPathComponent()
        if url.lastPathComponent == "contents", parent.pathExtension.lowercased() == "xcdatamodel" {
            return parent.deletingPathExtension().lastPathComponent
        }
        let base = url.deletingPathExtension().lastPathComponent
        return base.isEmpty ? url.lastPathComponent : base
    }

    /// The `.xcdatamodel` folder to read for a folder given by the user.
    private static func versionFolder(for folder: URL) throws -> URL {
        let fileManager = FileManager.default
        if fileManager.fileExists(atPath: folder.appendingPathComponent("contents").path),
           folder.pathExtension.lowercased() != "xcdatamodeld" {
            return folder
        }
        let children: [String]
        do {
            children = try fileManager.contentsOfDirectory(atPath: folder.path)
        } catch {
            throw StrataError(.modelUnreadable, "\(folder.path): cannot list the folder (\(error.localizedDescription))")
        }
        let versions = children.filter { $0.lowercased().hasSuffix(".xcdatamodel") }.sorted()
        if let current = currentVersionName(in: folder) {
            let candidates = [current, current + ".xcdatamodel"]
            if let match = candidates.first(where: { versions.contains($0) }) {
                return folder.appendingPathComponent(match)
            }
            throw StrataError(
                .modelUnreadable,
                "\(folder.path): .xccurrentversion names '\(current)', which is not in the folder (found: \(list(versions)))"
            )
        }
        switch versions.count {
        case 1:
            return folder.appendingPathComponent(versions[0])
        case 0:
            throw StrataError(.modelUnreadable, "\(folder.path): not an Xcode model (no .xcdatamodel version and no 'contents' file inside)")
        default:
            throw StrataError(
                .modelUnreadable,
                "\(folder.path): several model versions (\(list(versions))) and no .xccurrentversion naming the current one"
            )
        }
    }

    /// `_XCCurrentVersionName` from the folder's `.xccurrentversion` plist, if readable.
    private static func currentVersionName(in folder: URL) -> String? {
        let plistURL = folder.appendingPathComponent(".xccurrentversion")
        guard let data = try? Data(contentsOf: plistURL),
              let plist = try? PropertyListSerialization.propertyList(from: data, options: [], format: nil),
              let dictionary = plist as? [String: Any],
              let name = dictionary["_XCCurrentVersionName"] as? String,
              !name.isEmpty else {
            return nil
        }
        return name
    }

    private static func list(_ names: [String]) -> String {
        names.isEmpty ? "none" : names.joined(separator: ", ")
    }

    private static func readFile(_ url: URL) throws -> Data {
        do {
            return try Data(contentsOf: url)
        } catch {
            throw StrataError(.modelUnreadable, "\(url.path): cannot read the file (\(error.localizedDescription))")
        }
    }
}
