import Foundation
import Testing

@testable import MQTTBridge

@Suite struct OutboundQueueTests {
    static func message(_ number: Int) -> MQTTMessage { MQTTMessage(topic: "t/\(number)", text: "\(number)") }

    @Test func aFullQueueDropsTheOldestAndCountsThem() {
        var queue = OutboundQueue(limit: 3)
        for number in 1...5 { queue.append(Self.message(number)) }
        #expect(queue.count == 3)
        #expect(queue.takeDropped() == 2)
        #expect(queue.takeDropped() == 0)
        #expect(queue.removeFirst()?.topic == "t/3")
        #expect(queue.removeFirst()?.topic == "t/4")
        #expect(queue.removeFirst()?.topic == "t/5")
        #expect(queue.removeFirst() == nil)
        #expect(queue.isEmpty)
    }

    @Test func aMessageThatCouldNotBeSentGoesBackInFront() {
        var queue = OutboundQueue(limit: 3)
        queue.append(Self.message(1))
        queue.append(Self.message(2))
        let first = queue.removeFirst()!
        queue.prepend(first)
        #expect(queue.removeFirst()?.topic == "t/1")
        // Full: putting one back in front drops the newest.
        queue.prepend(first)
        queue.append(Self.message(3))
        queue.prepend(Self.message(0))
        #expect(queue.takeDropped() == 1)
        #expect((0..<3).compactMap { _ in queue.removeFirst()?.topic } == ["t/0", "t/1", "t/2"])
    }

    @Test func theQueueNeverHoldsMoreThanItsLimitWhateverComes() {
        var queue = OutboundQueue(limit: 7)
        var kept = 0
        for step in 0..<10_000 {
            switch step % 5 {
            case 0, 1, 2: queue.append(Self.message(step))
            case 3: if queue.removeFirst() != nil { kept += 1 }
            default: queue.prepend(Self.message(-step))
            }
            #expect(queue.count <= 7)
        }
        #expect(kept > 0)
    }
}
