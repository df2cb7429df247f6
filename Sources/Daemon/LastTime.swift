/// When something last happened (the live log's last line, the control object's last refresh), for services that
/// do a periodic job only when nothing did it meanwhile.
actor LastTime {
    private var instant = ContinuousClock.now
    func set(_ now: ContinuousClock.Instant) { instant = now }
    var age: Duration { .now - instant }
}
