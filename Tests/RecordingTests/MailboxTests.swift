import Testing

@testable import Recording

@Suite struct MailboxTests {
    @Test func aWaitingConsumerGetsEverythingThatArrivedSinceItsLastTurnInOneBatch() async {
        let broadcast = Broadcast<Int>()
        let mailbox = broadcast.subscribeBatches()
        for value in 0..<5 { broadcast.publish(value) }
        #expect(await mailbox.next() == [0, 1, 2, 3, 4])
        let waiting = Task { await mailbox.next() }
        // Published while the consumer waits (or just before it does): it gets a batch with it.
        broadcast.publish(5)
        #expect(await waiting.value == [5])
        broadcast.publish(6)
        broadcast.finish()
        // Finished: what is left comes first, then the end.
        #expect(await mailbox.next() == [6])
        #expect(await mailbox.next() == nil)
    }

    @Test func valuesPublishedTogetherReachAWaitingConsumerInOneBatchAndStreamsOneByOne() async {
        let broadcast = Broadcast<Int>()
        let mailbox = broadcast.subscribeBatches()
        let stream = broadcast.subscribe()
        let waiting = Task { await mailbox.next() }
        // The consumer waits first: one value at a time would then hand it the first alone.
        while !mailbox.hasWaitingConsumer { await Task.yield() }
        broadcast.publish(contentsOf: [1, 2, 3])
        #expect(await waiting.value == [1, 2, 3])
        broadcast.finish()
        var streamed: [Int] = []
        for await value in stream { streamed.append(value) }
        #expect(streamed == [1, 2, 3])
    }

    @Test func aFullMailboxDropsTheOldestAndCountsThem() async {
        let mailbox = Mailbox<Int>(limit: 3)
        for value in 0..<10 { mailbox.put(contentsOf: [value]) }
        mailbox.put(contentsOf: [10, 11])
        #expect(await mailbox.next() == [9, 10, 11])
        #expect(mailbox.takeDropped() == 9)
        #expect(mailbox.takeDropped() == 0)
        mailbox.put(contentsOf: [12, 13])
        #expect(await mailbox.next() == [12, 13])
        #expect(mailbox.takeDropped() == 0)
    }

    @Test func cancellingTheConsumerEndsItsSubscription() async {
        let broadcast = Broadcast<Int>()
        let mailbox = broadcast.subscribeBatches()
        let consumer = Task { await mailbox.next() }
        consumer.cancel()
        #expect(await consumer.value == nil)
        // Gone from the broadcast: publishing reaches nobody and does not refill the ended mailbox.
        broadcast.publish(1)
        #expect(await mailbox.next() == nil)
    }
}
