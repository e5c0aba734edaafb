import Foundation
import Testing

/// `strata`'s commands against a live server: output, `--json` validity and
/// exit statuses (0 ok, 1 invalid input, 2 cannot connect, 3 conflict, 4 not found).
extension ToolTests {
@Suite("strata client commands", .serialized, .timeLimit(.minutes(1)))
struct CLICommandTests {
    @Test("ping: options before or after the command, STRATA_HOST/STRATA_PORT, --json")
    func pingAndConnectionOptions() throws {
        let server = try LiveServer.start()
        defer { server.stop() }
        let port = String(server.port)

        let before = try CLI.bare(["--host", "127.0.0.1", "--port", port, "ping"])
        #expect(before.status == 0, "\(before.stderr)")
        #expect(before.stdout.hasPrefix("pong from ") && before.stdout.hasSuffix(" ms\n"))

        let after = try CLI.bare(["ping", "--host=127.0.0.1", "--port=\(port)", "--json"])
        #expect(after.status == 0, "\(after.stderr)")
        let json = try CLI.object(after.stdout)
        #expect(json["roundTripMs"] is Double || json["roundTripMs"] is Int)
        #expect(json["model"] as? String == "BooksAndFeedback")

        let environment = try CLI.bare(["ping"], environment: ["STRATA_HOST": "127.0.0.1", "STRATA_PORT": port])
        #expect(environment.status == 0, "\(environment.stderr)")

        // The command line wins over the environment.
        let overridden = try CLI.bare(["--port", port, "count", "Book"], environment: ["STRATA_PORT": "1"])
        #expect(overridden.status == 0, "\(overridden.stderr)")
        #expect(overridden.stdout == "0\n")
    }

    @Test("psql's and redis-cli's conventions: -h and -p, -p7420, --url, --timeout; the options listed in --help")
    func conventionalConnectionOptions() throws {
        let server = try LiveServer.start()
        defer { server.stop() }
        let port = String(server.port)
        for arguments in [
            ["-h", "127.0.0.1", "-p", port, "ping"], ["-p\(port)", "ping"], ["ping", "-p", port, "-h", "127.0.0.1"], ["ping", "-p\(port)"],
            ["--url", "tcp://127.0.0.1:\(port)", "ping"], ["ping", "--url", "tcp://127.0.0.1:\(port)"],
            ["--timeout", "3", "-p", port, "ping"],
        ] {
            let run = try CLI.bare(arguments)
            #expect(run.status == 0, "\(arguments): \(run.stderr)")
        }
        #expect(try CLI.bare(["ping"], environment: ["STRATA_URL": "tcp://127.0.0.1:\(port)"]).status == 0)
        // --port wins over the URL's port at the same level.
        #expect(try CLI.bare(["--url", "tcp://127.0.0.1:1", "--port", port, "ping"]).status == 0)
        for bad in [["--url", "http://127.0.0.1:\(port)", "ping"], ["--url", "tcp://", "ping"], ["--timeout", "0", "-p", port, "ping"], ["-h"]] {
            let run = try CLI.bare(bad)
            #expect(run.status == 1, "\(bad): \(run.stderr)")
        }
        let help = try CLI.bare(["--help"])
        for option in ["-h, --host", "-p, --port", "--url", "--auth-token-file", "--timeout", "--tls-ca"] {
            #expect(help.stdout.contains(option), "\(option) missing from strata --help")
        }
        #expect(help.stdout.contains("5 request failed"))
    }

    @Test("The shells' completion scripts complete entity names from the server the typed options name")
    func entityCompletion() throws {
        let server = try LiveServer.start()
        defer { server.stop() }
        let port = String(server.port)
        // What a completion script runs when Tab is pressed after `strata -p PORT fetch B`.
        let names = try CLI.bare(["---completion", "fetch", "--", "positional@0", "4", "1", "strata", "-p", port, "fetch", "B"])
        #expect(names.status == 0, "\(names.stderr)")
        #expect(names.stdout.split(separator: "\n") == ["Book"], "\(names.stdout)")
        let all = try CLI.bare(["---completion", "export", "--", "positional@0", "4", "0", "strata", "-p", port, "export", ""])
        #expect(all.stdout.split(separator: "\n") == ["Book", "Feedback"], "\(all.stdout)")
        // No server there: no names, no error, quickly.
        let started = Date()
        let none = try CLI.bare(["---completion", "count", "--", "positional@0", "4", "0", "strata", "-p", "1", "count", ""])
        #expect(none.status == 0)
        #expect(none.stdout.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty)
        #expect(Date().timeIntervalSince(started) < 10)
        let script = try CLI.bare(["--generate-completion-script", "bash"])
        #expect(script.stdout.contains("---completion fetch -- positional@0"), "the bash script asks strata for entity names")
    }

    @Test("--auth-token and STRATA_AUTH_TOKEN reach a server that requires a token")
    func authToken() throws {
        let server = try LiveServer.start(["--auth-token", "sesame"])
        defer { server.stop() }
        let cli = CLI(server: server)
        let refused = try cli.run(["count", "Book"])
        #expect(refused.status == 1, "\(refused.stderr)")
        #expect(refused.stdout.isEmpty)
        #expect(refused.stderr.hasPrefix("error: UNAUTHENTICATED"), "\(refused.stderr)")
        #expect(try cli.run(["--auth-token", "sesame", "count", "Book"]).stdout == "0\n")
        #expect(try cli.run(["count", "Book", "--auth-token=sesame"]).stdout == "0\n")
        #expect(try cli.run(["count", "Book"], environment: ["STRATA_AUTH_TOKEN": "sesame"]).stdout == "0\n")
        // From a file: its first line.
        let file = server.dataDirectory.appendingPathComponent("token")
        try Data("sesame\nnot this\n".utf8).write(to: file)
        #expect(try cli.run(["--auth-token-file", file.path, "count", "Book"]).stdout == "0\n")
        #expect(try cli.run(["count", "Book", "--auth-token-file", file.path]).stdout == "0\n")
        #expect(try cli.run(["--auth-token-file", file.path + ".missing", "count", "Book"]).status == 1)
    }

    @Test("Cannot connect: exit 2, the error on stderr, nothing on stdout")
    func cannotConnect() throws {
        for arguments in [["--port", "1", "ping"], ["--port", "1", "fetch", "Book", "--json"], ["count", "Book"]] {
            let run = try CLI.bare(arguments, environment: ["STRATA_PORT": "1"])
            #expect(run.status == 2, "\(arguments): \(run.stderr)")
            #expect(run.stdout.isEmpty)
            #expect(run.stderr.hasPrefix("error: UNAVAILABLE"), "\(run.stderr)")
        }
    }

    @Test("Usage errors exit 1 without a server; --help exits 0")
    func usage() throws {
        let help = try CLI.bare(["--help"])
        #expect(help.status == 0)
        #expect(help.stdout.contains("fetch") && help.stdout.contains("watch") && help.stdout.contains("shell"))
        for arguments in [["fetch"], ["fetch", "Book", "--limit", "-1"], ["nonsense"], ["--port"], ["--port", "x", "ping"], ["watch", "--where", "a == 1"]] {
            let run = try CLI.bare(arguments, environment: ["STRATA_PORT": "1"])
            #expect(run.status == 1, "\(arguments): \(run.stderr)")
            #expect(run.stdout.isEmpty, "\(arguments)")
        }
    }

    /// Terminal cells of `character`, as the test counts them for the
    /// characters it uses: CJK and emoji two, combining marks none.
    private static func cells(_ character: Character) -> Int {
        guard let first = character.unicodeScalars.first else { return 0 }
        if first.properties.isEmojiPresentation || (0x3040...0x9FFF).contains(first.value) { return 2 }
        return 1
    }

    @Test("fetch --format: streamed ndjson, json and CSV, --no-header, and tables aligned in terminal cells")
    func fetchFormats() throws {
        let server = try LiveServer.start()
        defer { server.stop() }
        let cli = CLI(server: server)
        let titles = ["日本語の本", "🐟 Fish", "Cafe\u{301} au lait", "Comma, \"quoted\"", "plain"]
        for title in titles { _ = try cli.insertBook(title) }

        let ndjson = try cli.succeed(["fetch", "Book", "--format", "ndjson", "--sort", "title"]).split(separator: "\n")
        #expect(ndjson.count == titles.count)
        let parsed = try ndjson.map { try CLI.object(String($0)) }
        #expect(Set(parsed.compactMap { ($0["values"] as? [String: Any])?["title"] as? String }) == Set(titles))

        let json = try cli.succeed(["fetch", "Book", "--format", "json"])
        let array = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [[String: Any]])
        #expect(array.count == titles.count)
        #expect(try cli.succeed(["fetch", "Book", "--format", "json", "--where", "title == 'none'"]) == "[]\n")

        let csv = try cli.succeed(["fetch", "Book", "--format", "csv", "--sort", "title"])
        let lines = csv.components(separatedBy: "\r\n").filter { !$0.isEmpty }
        #expect(lines.first?.hasPrefix("id,entity,version,") == true, "\(csv)")
        #expect(lines.count == titles.count + 1)
        #expect(csv.contains("\"Comma, \"\"quoted\"\"\""), "\(csv)")
        let headless = try cli.succeed(["fetch", "Book", "--format", "csv", "--no-header"])
        #expect(headless.components(separatedBy: "\r\n").filter { !$0.isEmpty }.count == titles.count)
        #expect(try cli.run(["fetch", "Book", "--json", "--format", "csv"]).status == 1)

        // The table's columns line up in terminal cells.
        let table = try cli.succeed(["fetch", "Book", "--sort", "title"]).split(separator: "\n").map(String.init)
        let rule = try #require(table.dropFirst().first)
        var starts: [Int] = []
        var previous: Character = " "
        for (offset, character) in rule.enumerated() {
            if character == "-", previous == " " { starts.append(offset) }
            previous = character
        }
        #expect(starts.count > 3)
        for line in table.prefix(2 + titles.count) {
            // The line as terminal cells: a wide character fills two.
            var cells: [Character] = []
            for character in line {
                let width = Self.cells(character)
                if width > 0 { cells.append(character) }
                if width > 1 { cells.append("\u{0}") }
            }
            // Two blank cells before every column: nothing spills over.
            for start in starts.dropFirst() where start < cells.count {
                #expect(cells[start - 2] == " " && cells[start - 1] == " ", "column at cell \(start) is not preceded by its separator in: \(line)")
            }
        }
        let bare = try cli.succeed(["fetch", "Book", "--no-header"]).split(separator: "\n")
        #expect(bare.count == titles.count)
    }

    @Test("export and import: ndjson and CSV round-trip between servers, in bounded saves; a refused save stops the import naming its lines")
    func exportImport() throws {
        let source = try LiveServer.start()
        defer { source.stop() }
        let cli = CLI(server: source)
        let titles = ["日本語の本", "Two\nlines, and \"quotes\"", "plain", "  spaced  ", "Comma, here"]
        for (index, title) in titles.enumerated() {
            // One book without an author: nil must come back nil.
            _ = try cli.insertBook(title, uuid: UUID().uuidString, ["pages=\(index * 100)", "price=1\(index).50", index == 3 ? "author=" : "author=Ann"])
        }
        let folder = source.dataDirectory
        let ndjson = folder.appendingPathComponent("books.ndjson"), csv = folder.appendingPathComponent("books.csv")
        try Data(cli.succeed(["export", "Book"]).utf8).write(to: ndjson)
        try Data(cli.succeed(["export", "Book", "--format", "csv"]).utf8).write(to: csv)
        func snapshot(_ cli: CLI) throws -> [String] {
            try cli.succeed(["fetch", "Book", "--format", "ndjson", "--sort", "uuid"]).split(separator: "\n").map { line in
                let values = try CLI.object(String(line))["values"] as? [String: Any] ?? [:]
                return ["uuid", "title", "pages", "price", "author"].map { "\(values[$0] ?? "nil")" }.joined(separator: "|")
            }
        }
        let original = try snapshot(cli)
        #expect(original.count == titles.count)
        for file in [ndjson, csv] {
            let target = try LiveServer.start()
            defer { target.stop() }
            let targetCLI = CLI(server: target)
            let run = try targetCLI.run(["import", "Book", file.path, "--batch", "2"])
            #expect(run.status == 0, "\(file.lastPathComponent): \(run.stderr)")
            #expect(run.stdout == "imported \(titles.count) Book objects\n")
            #expect(try snapshot(targetCLI) == original, "\(file.lastPathComponent)")
            // Three saves of at most two objects.
            #expect(try targetCLI.requests("save") == 3)
            // Again: the UUIDs are unique, so the first save is refused, named.
            let again = try targetCLI.run(["import", "Book", file.path, "--batch", "2"])
            #expect(again.status == 3, "\(again.stderr)")
            #expect(again.stderr.contains("the save of lines"), "\(again.stderr)")
        }
        // Flat objects from standard input; a bad line names itself.
        let flat = "{\"uuid\": \"\(UUID().uuidString)\", \"title\": \"Flat\", \"pages\": 12}\n"
        let stdinRun = try cli.run(["import", "Book", "-"], stdin: flat)
        #expect(stdinRun.status == 0, "\(stdinRun.stderr)")
        let bad = try cli.run(["import", "Book", "-"], stdin: flat + "{\"pages\": \"many\"}\n")
        #expect(bad.status == 1)
        #expect(bad.stderr.contains("line 2"), "\(bad.stderr)")
        // CSV from standard input names its format.
        let csvIn = "uuid,title,pages\r\n\(UUID().uuidString),\"From, stdin\",7\r\n"
        let piped = try cli.run(["import", "Book", "-", "--format", "csv"], stdin: csvIn)
        #expect(piped.status == 0, "\(piped.stderr)")
        #expect(try cli.succeed(["count", "Book", "--where", "title == 'From, stdin' AND pages == 7"]) == "1\n")
    }

    @Test("model: the served model as a tree and as JSON")
    func model() throws {
        let server = try LiveServer.start()
        defer { server.stop() }
        let cli = CLI(server: server)
        let text = try cli.succeed(["model"])
        #expect(text.hasPrefix("Model BooksAndFeedback"))
        #expect(text.contains("  price: Decimal?"))
        #expect(text.contains("  feedbackList => [Feedback]"))
        #expect(text.contains("Configurations"))
        #expect(text.contains("sqlite store"))

        let json = try CLI.object(cli.succeed(["model", "--json"]))
        #expect(json["name"] as? String == "BooksAndFeedback")
        let entities = try #require(json["entities"] as? [[String: Any]])
        #expect(entities.map { $0["name"] as? String } == ["Book", "Feedback"])
        let book = try #require(entities.first)
        let attributes = try #require(book["attributes"] as? [[String: Any]])
        #expect(attributes.contains { $0["name"] as? String == "pages" && $0["type"] as? String == "Integer 32" })
        let fetched = try #require(book["fetchedProperties"] as? [[String: Any]])
        #expect(fetched.first?["name"] as? String == "feedbackList")
        let configurations = try #require(json["configurations"] as? [[String: Any]])
        #expect(Set(configurations.compactMap { $0["name"] as? String }) == ["Book", "Feedback"])
        #expect(configurations.allSatisfy { $0["storeType"] as? String == "sqlite" && !($0["storeID"] as? String ?? "").isEmpty })
    }

    @Test("insert, count, fetch (table and JSON), update with and without --if-version")
    func insertFetchUpdate() throws {
        let server = try LiveServer.start()
        defer { server.stop() }
        let cli = CLI(server: server)
        let insert = try cli.run(["insert", "Book", "uuid=\(UUID().uuidString)", "title=Dune", "author=Frank Herbert", "pages=412", "price=9.99"])
        #expect(insert.status == 0, "\(insert.stderr)")
        #expect(CLI.isObjectIDLine(insert.stdout, entity: "Book"), "\(insert.stdout)")
        let dune = insert.stdout.trimmingCharacters(in: .newlines)
        _ = try cli.insertBook("Emma", ["pages=320", "price=12.50"])
        _ = try cli.insertBook("Zen", ["pages=90"])

        #expect(try cli.succeed(["count", "Book"]) == "3\n")
        #expect(try cli.succeed(["count", "Book", "--where", "pages > 100"]) == "2\n")
        #expect(try cli.succeed(["count", "Book", "--json"]) == "3\n")

        // The table: object ID first, aligned columns, one line per object.
        let table = try cli.succeed(["fetch", "Book", "--sort", "title"])
        let lines = table.split(separator: "\n").map(String.init)
        #expect(lines.count == 6, "\(table)")
        #expect(lines[0].hasPrefix("id "))
        let titleColumn = try #require(lines[0].range(of: "title")).lowerBound.utf16Offset(in: lines[0])
        #expect(lines[2].dropFirst(titleColumn).hasPrefix("Dune"))
        #expect(lines[3].dropFirst(titleColumn).hasPrefix("Emma"))
        #expect(lines[4].dropFirst(titleColumn).hasPrefix("Zen"))
        #expect(lines[2].hasPrefix(dune))
        #expect(lines[5] == "(3 rows)")

        let page = try CLI.array(cli.succeed(["fetch", "Book", "--sort", "-pages", "--limit", "2", "--offset", "1", "--json"]))
        #expect(page.count == 2)
        #expect(page.map { ($0["values"] as? [String: Any])?["title"] as? String } == ["Emma", "Zen"])
        let emma = try #require(page.first)
        #expect(emma["entity"] as? String == "Book")
        #expect(emma["version"] as? Int == 1)
        let values = try #require(emma["values"] as? [String: Any])
        #expect(values["price"] as? String == "12.5")
        #expect(values["pages"] as? Int == 320)
        #expect(values["author"] is NSNull)
        #expect(emma["fetched"] == nil)
        #expect(try CLI.array(cli.succeed(["fetch", "Book", "--where", "title == 'Nope'", "--json"])).isEmpty)

        // update prints the new version; --if-version guards against stale ones.
        #expect(try cli.succeed(["update", dune, "title=Dune Messiah"]) == "2\n")
        let stale = try cli.run(["update", dune, "pages=1", "--if-version", "1"])
        #expect(stale.status == 3, "\(stale.stderr)")
        #expect(stale.stdout.isEmpty)
        #expect(stale.stderr.hasPrefix("error: ABORTED (133020)"), "\(stale.stderr)")
        #expect(try cli.succeed(["update", dune, "pages=413", "--if-version", "2"]) == "3\n")
        let updated = try CLI.object(cli.succeed(["update", dune, "author=", "--json"]))
        #expect(updated["id"] as? String == dune)
        #expect(updated["version"] as? Int == 4)
        #expect((updated["values"] as? [String: Any])?["author"] is NSNull)
        #expect((updated["values"] as? [String: Any])?["pages"] as? Int == 413)

        let inserted = try CLI.object(cli.succeed(["insert", "Book", "uuid=\(UUID().uuidString)", "title=JSON", "--json"]))
        #expect(inserted["version"] as? Int == 1)
        #expect((inserted["values"] as? [String: Any])?["title"] as? String == "JSON")
    }

    @Test("Values typed by the model round-trip exactly: decimals, dates, binary, nil")
    func typedValues() throws {
        let server = try LiveServer.start()
        defer { server.stop() }
        let cli = CLI(server: server)
        let uuid = UUID().uuidString
        let cover = Data([0, 1, 2, 250, 255]).base64EncodedString()
        let id = try cli.insertBook("Exact", uuid: uuid, [
            "price=12345678901234567890.123456789", "publishDate=2024-05-01T12:30:00.250Z",
            "coverColor=\(cover)", "pages=-5", "author=null",
        ])
        let object = try CLI.object(cli.succeed(["refresh", id, "--json"]))
        let values = try #require(object["values"] as? [String: Any])
        #expect(values["price"] as? String == "12345678901234567890.123456789")
        #expect(values["publishDate"] as? String == "2024-05-01T12:30:00.250Z")
        #expect(values["coverColor"] as? String == cover)
        #expect(values["pages"] as? Int == -5)
        #expect(values["uuid"] as? String == uuid)
        #expect(values["author"] is NSNull)
        #expect(values["publishMonthID"] == nil, "transient attributes are not shown")

        // An offset is converted to UTC; whole seconds print without a fraction.
        #expect(try cli.succeed(["update", id, "publishDate=2024-05-01T14:30:00+02:00"]) == "2\n")
        let fetched = try CLI.array(cli.succeed(["fetch", "Book", "--json"]))
        #expect((fetched.first?["values"] as? [String: Any])?["publishDate"] as? String == "2024-05-01T12:30:00Z")
        let table = try cli.succeed(["fetch", "Book"])
        #expect(table.contains("2024-05-01T12:30:00Z"))
        #expect(table.contains("12345678901234567890.123456789"))
    }

    @Test("A value that does not fit: exit 1 naming the attribute and type, nothing sent")
    func badValues() throws {
        let server = try LiveServer.start()
        defer { server.stop() }
        let cli = CLI(server: server)
        let uuid = "uuid=\(UUID().uuidString)"
        let cases: [([String], [String])] = [
            (["insert", "Book", uuid, "title=T", "pages=abc"], ["Book.pages", "Integer 32"]),
            (["insert", "Book", uuid, "title=T", "pages=3000000000"], ["Book.pages", "Integer 32"]),
            (["insert", "Book", uuid, "title=T", "price=1.2.3"], ["Book.price", "Decimal"]),
            (["insert", "Book", "uuid=not-a-uuid", "title=T"], ["Book.uuid", "UUID"]),
            (["insert", "Book", uuid, "title=T", "publishDate=yesterday"], ["Book.publishDate", "Date"]),
            (["insert", "Book", uuid, "title=T", "coverColor=%%%"], ["Book.coverColor", "Transformable"]),
            (["insert", "Book", uuid, "title=T", "shelf=3"], ["Book", "shelf"]),
            (["insert", "Book", uuid, "title=T", "canonicalTitle=x"], ["Book.canonicalTitle", "derived"]),
            (["insert", "Feedback", "bookUUID=\(UUID().uuidString)", "rating=70000"], ["Feedback.rating", "Integer 16"]),
            (["insert", "Shelf", "name=x"], ["Shelf"]),
            (["insert", "Book", "title"], ["key=value"]),
        ]
        for (arguments, mentions) in cases {
            let run = try cli.run(arguments)
            #expect(run.status == 1, "\(arguments): \(run.stderr)")
            #expect(run.stdout.isEmpty, "\(arguments)")
            for mention in mentions { #expect(run.stderr.contains(mention), "\(arguments): \(run.stderr)") }
        }
        let id = try cli.insertBook("Fine")
        let update = try cli.run(["update", id, "pages=12.5"])
        #expect(update.status == 1)
        #expect(update.stderr.contains("Book.pages") && update.stderr.contains("Integer 32"), "\(update.stderr)")
        // Only the one good insert reached the server.
        #expect(try cli.requests("save") == 1)
        #expect(try cli.succeed(["count", "Book"]) == "1\n")
        #expect(try CLI.object(cli.succeed(["refresh", id, "--json"]))["version"] as? Int == 1)
    }

    @Test("Conflicts exit 3, missing objects exit 4, bad IDs and predicates exit 1")
    func conflictsAndMissingObjects() throws {
        let server = try LiveServer.start()
        defer { server.stop() }
        let cli = CLI(server: server)
        let uuid = UUID().uuidString
        let first = try cli.insertBook("Once", uuid: uuid)
        let duplicate = try cli.run(["insert", "Book", "uuid=\(uuid)", "title=Twice"])
        #expect(duplicate.status == 3, "\(duplicate.stderr)")
        #expect(duplicate.stderr.hasPrefix("error: ALREADY_EXISTS (133021)"), "\(duplicate.stderr)")

        let second = try cli.insertBook("Other")
        let deleted = try cli.run(["delete", first, second])
        #expect(deleted.status == 0, "\(deleted.stderr)")
        #expect(Set(deleted.stdout.split(separator: "\n").map(String.init)) == [first, second])
        #expect(try cli.succeed(["count", "Book"]) == "0\n")

        for arguments in [["refresh", first], ["refresh", first, "--json"], ["update", first, "title=Ghost"], ["delete", first]] {
            let run = try cli.run(arguments)
            #expect(run.status == 4, "\(arguments): \(run.stderr)")
            #expect(run.stdout.isEmpty)
            #expect(run.stderr.hasPrefix("error: NOT_FOUND"), "\(arguments): \(run.stderr)")
        }
        for arguments in [["refresh", "not-an-id"], ["update", "strata://x/Book", "title=x"], ["fetch", "Book", "--where", "title ==="],
                          ["fetch", "Book", "--sort", "nosuchkey"], ["count", "Nope"], ["fetch", "Book", "--include", "nothing"]] {
            let run = try cli.run(arguments)
            #expect(run.status == 1, "\(arguments): \(run.stderr)")
            #expect(run.stdout.isEmpty)
            #expect(run.stderr.hasPrefix("error: INVALID_ARGUMENT"), "\(arguments): \(run.stderr)")
        }
        let json = try CLI.object(cli.succeed(["delete", cli.insertBook("Third"), "--json"]))
        #expect((json["deleted"] as? [String])?.count == 1)
    }

    @Test("refresh and fetch --include show fetched properties")
    func fetchedProperties() throws {
        let server = try LiveServer.start()
        defer { server.stop() }
        let cli = CLI(server: server)
        let uuid = UUID().uuidString
        let book = try cli.insertBook("Reviewed", uuid: uuid)
        let good = try cli.succeed(["insert", "Feedback", "bookUUID=\(uuid)", "rating=5", "comment=Loved it"]).trimmingCharacters(in: .newlines)
        let bad = try cli.succeed(["insert", "Feedback", "bookUUID=\(uuid)", "rating=1"]).trimmingCharacters(in: .newlines)
        _ = try cli.succeed(["insert", "Feedback", "bookUUID=\(UUID().uuidString)", "rating=3"])

        let object = try CLI.object(cli.succeed(["refresh", book, "--json"]))
        #expect(object["id"] as? String == book)
        let fetched = try #require(object["fetched"] as? [String: Any])
        #expect(Set(fetched["feedbackList"] as? [String] ?? []) == [good, bad])

        let record = try cli.succeed(["refresh", book])
        #expect(record.contains("feedbackList"))
        #expect(record.contains(good) && record.contains(bad))
        #expect(record.contains("Reviewed"))

        let books = try CLI.array(cli.succeed(["fetch", "Book", "--include", "feedbackList", "--json"]))
        #expect(Set((books.first?["fetched"] as? [String: Any])?["feedbackList"] as? [String] ?? []) == [good, bad])
        let table = try cli.succeed(["fetch", "Book", "--include", "feedbackList"])
        #expect(table.split(separator: "\n").first?.hasSuffix("feedbackList") == true)

        let feedback = try CLI.array(cli.succeed(["fetch", "Feedback", "--where", "rating >= 3", "--sort", "-rating", "--json"]))
        #expect(feedback.map { ($0["values"] as? [String: Any])?["rating"] as? Int } == [5, 3])
    }

    @Test("stats: figures per operation and store, as a table and as JSON")
    func stats() throws {
        let server = try LiveServer.start()
        defer { server.stop() }
        let cli = CLI(server: server)
        _ = try cli.insertBook("Counted")
        let json = try CLI.object(cli.succeed(["stats", "--json"]))
        #expect(json["connectionsOpen"] as? Int == 1)
        #expect((json["connectionsTotal"] as? Int ?? 0) >= 2)
        let operations = try #require(json["operations"] as? [[String: Any]])
        #expect(operations.first { $0["operation"] as? String == "save" }?["requests"] as? Int == 1)
        let stores = try #require(json["stores"] as? [[String: Any]])
        #expect(stores.count == 2)
        #expect(stores.contains { $0["configuration"] as? String == "Book" && ($0["sizeBytes"] as? Int ?? 0) > 0 })

        let text = try cli.succeed(["stats"])
        #expect(text.contains("connections"))
        #expect(text.contains("operation") && text.contains("p99 ms"))
        #expect(text.contains("save"))
        #expect(text.contains("Books.sqlite"))
    }
}
}
