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

account-title = Account
account-intro = Signed in as { $username }. Change your password here.
account-link = Your account: change your password
account-password = Change password
account-current-password = Current password
account-new-password = New password
account-new-password-hint = Other browsers signed in as you are signed out; this one stays signed in.
account-confirm-password = New password again
account-password-save = Change password
account-password-changed = Your password has been changed.
account-password-mismatch = The two new passwords differ.
password-refused = The password is not accepted:
password-reason-password-too-short = It is too short: use at least { $min_length } characters.
password-reason-password-too-similar = It is too similar to the username or email address.
password-reason-password-too-common = It is too common: it appears in lists of often-used passwords.
password-reason-password-entirely-numeric = It consists of digits only.
error-wrong-password = The current password is wrong.
user-priority = Priority
user-max-priority = tokens up to { $priority }
user-groups-hint = The groups this person is a member of; default groups include everyone anyway.
user-groups-none = There are no groups to choose yet (default groups include everyone).

token-raised-by = The administrator { $admin } set this token to { $priority }. You can lower it, but not raise it again: the highest you can choose is { $max }.
token-raised-by-unknown = An administrator set this token to { $priority }. You can lower it, but not raise it again: the highest you can choose is { $max }.
