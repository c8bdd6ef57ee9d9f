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

backend-no-pool = In no pool: nobody can call its models (they answer 404) until a pool includes this backend.
backend-saved-no-pool = Backend “{ $name }” saved, but it is in no pool: its models answer 404 until a pool includes it.
backend-detect-failed = Detection of { $name } failed: its card says why.
backend-detect-failed-unreachable = Detection failed: { $url } did not answer ({ $error }).
backend-detect-failed-status = Detection failed: { $url } answered { $status } ({ $error }).
backend-detect-failed-not-models = Detection failed: { $url } answered, but not with a list of models ({ $error }).
backend-part-pools = Pools
backend-pools-hint = The pools this backend serves in; each pool decides who may call its models.
backend-pools-none = No pool exists yet: create one under Pools, then add this backend to it.

pool-access = Who may use it
pool-access-everyone = Everyone
pool-access-everyone-hint = Every person and every token, whatever their groups.
pool-access-groups = Only members of these groups
pool-access-nobody = No group checked: nobody may use this pool.
pool-groups-nobody = Nobody
pool-widen-confirm = Open the pool “{ $name }” to everyone? Every person and token will be able to use its models, not only the groups allowed now.
pool-widen-action = Open to everyone

error-access-widening = Removing every group would open the pool to everyone: choose “Everyone” to allow that.
