# Administration: rough edges of the Queue, Backends, Pools, Users and Groups pages, passwords, renames.

queue-order-intro = Each line is a set of backends whose slots its requests share; the first row gets the next free slot. The class decides first, then the scheduler's order: the score (serial scheduler), the hint and the time waited.
queue-position = Place
queue-position-value = { $position }.
queue-score = Score
queue-waits-for = Waits for
queue-line-heading = { $backends }: { $count ->
    [one] one request waits
   *[other] { $count } requests wait
}
