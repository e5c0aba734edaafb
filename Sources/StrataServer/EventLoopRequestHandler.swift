import NIOCore
import StrataWire

/// The one handler of a connection that answers requests on its event
/// loop: gets from the row cache (``CachedGetHandler``), small fetches
/// (``FetchHandler``) and saves (``SaveHandler``), tried in that order as
/// each frame is read; a frame none of them takes goes on to the async
/// side unchanged.
///
/// One handler, not three in a row: every read burst's end, every read
/// request and every frame passed on crosses each handler of the pipeline,
/// and those crossings cost a get about as much as finding its row. The
/// three keep their own rules (what each answers, its budgets, its
/// statistics) and can still be put in a pipeline alone; this handler
/// checks once what they all require, the hello answered
/// (``ConnectionState/answersOnEventLoop``) and the socket writable, and
/// again after each, since a frame that does not decode stops the
/// connection's reading. Answers are written as they are made and flushed
/// at the end of the loop's turn (``EventLoopCompletionBatch/flushAtEndOfTurn(_:)``),
/// so answers to frames read together leave in one write, and the answers
/// of one turn to all of the loop's connections one after another. The
/// end of a read burst goes on to the async side only when a frame did
/// (the async channel delivers what it received then): a burst answered
/// here whole ends here.
final class EventLoopRequestHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = Frame
    typealias InboundOut = Frame
    /// Whole wire frames.
    typealias OutboundOut = ByteBuffer

    private let gets: CachedGetHandler
    private let fetches: FetchHandler
    private let saves: SaveHandler
    private let state: ConnectionState
    /// The loop's batch, which flushes the answers at the end of the loop's turn.
    private let batch: EventLoopCompletionBatch
    /// Whether an answer was written since the last flush.
    private var needsFlush = false
    /// Whether a frame went on to the async side in this read burst.
    private var passedOn = false
    /// The channel's allocator and writability, kept here: reading them
    /// through `context.channel` for every frame retains and releases the
    /// channel and its parts each time. The writability follows
    /// `channelWritabilityChanged`, which the channel fires whenever it
    /// changes.
    private var allocator = ByteBufferAllocator()
    private var isWritable = true
    /// The last get's answer, kept to write the next one into: once the
    /// channel has written it, its storage is this handler's alone and is
    /// written over in place. Kept only while small
    /// (``maximumSpareBytes``), so that an idle connection holds little.
    private var spare: ByteBuffer?
    /// The largest answer buffer kept for the next get.
    static let maximumSpareBytes = 2048

    /// A handler answering with the three answerers of `state`'s connection,
    /// its answers flushed by `batch` (its event loop's).
    init(gets: CachedGetHandler, fetches: FetchHandler, saves: SaveHandler, state: ConnectionState, batch: EventLoopCompletionBatch) {
        self.gets = gets
        self.fetches = fetches
        self.saves = saves
        self.state = state
        self.batch = batch
    }

    func handlerAdded(context: ChannelHandlerContext) {
        allocator = context.channel.allocator
        isWritable = context.channel.isWritable
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        isWritable = context.channel.isWritable
        context.fireChannelWritabilityChanged()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        if state.answersOnEventLoop, isWritable {
            if let answer = gets.answer(frame, allocator: allocator, reusing: &spare) {
                if answer.capacity <= Self.maximumSpareBytes { spare = answer }
                return write(answer, context: context)
            }
            // A frame that does not decode stops the connection's reading
            // (``ConnectionState/stopReading(_:)``): nothing is taken here after it.
            if state.answersOnEventLoop, let answer = fetches.answer(frame, allocator: allocator) {
                return write(answer, context: context)
            }
            if state.answersOnEventLoop, saves.start(frame, context: context) { return }
        }
        passedOn = true
        context.fireChannelRead(data)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        gets.readBurstEnded()
        fetches.readBurstEnded()
        if needsFlush {
            needsFlush = false
            batch.flushAtEndOfTurn(context)
        }
        guard passedOn else { return }
        passedOn = false
        context.fireChannelReadComplete()
    }

    /// Writes an answer made here, to be flushed when the read burst ends.
    private func write(_ answer: ByteBuffer, context: ChannelHandlerContext) {
        state.activity.touch()
        context.write(wrapOutboundOut(answer), promise: nil)
        needsFlush = true
    }
}
