# Administration: settings, groups, users, all tokens.

admin-settings-title = Settings
admin-settings-intro = Operator settings: request prioritization, the system default priority and how long requests may wait for capacity.
admin-groups-title = Groups
admin-groups-intro = Gateway groups decide who administers aiplane and the priority of their members; which models they may use is set on each pool (Backends → Pools).
admin-users-title = Users
admin-users-intro = Local accounts that can sign in to aiplane.
admin-tokens-title = All tokens
admin-tokens-intro = Every API token with its owner and its priority.

## Settings

settings-section-access-gateway = Access › Gateway
settings-section-access-gateway-intro = Request prioritization and the admission queue that orders requests while every backend is busy.
settings-section-observability = Observability
settings-section-observability-intro = How long the per-request activity records are kept.
settings-save = Save settings
settings-save-hint = All values are saved together; if one is not allowed, nothing changes.
settings-saved = Settings saved.
setting-default = Default: { $value }.
setting-error = { $setting }: { $message }
setting-error-range = { $setting } must be a whole number from { $min } to { $max }.

setting-gateway-priority-enabled = Enable request prioritization
setting-gateway-priority-enabled-hint = When off, every request is in one class and the queue serves them in arrival order.
setting-gateway-priority-default = System default priority
setting-gateway-priority-default-hint = The priority of people whose groups set none.
setting-gateway-upstream-wait-secs = Wait budget (seconds)
setting-gateway-upstream-wait-secs-hint = How long a request may wait for a free backend before it fails with “capacity timeout”. 0 still tries once.
setting-gateway-scheduler = Scheduler
setting-gateway-scheduler-hint = Strict: high before medium before low, arrival order within a class. Scored: adds aging and cache affinity. First come, first served: the priority is a head start. Weighted shortest prompt: short prompts go first, weighted by priority. Earliest deadline first: within a class, a request that asked to wait less (X-AIplane-Max-Wait) goes first.
setting-gateway-scheduler-strict = Strict priority
setting-gateway-scheduler-serial = Scored (aging, affinity)
setting-gateway-scheduler-fcfs = First come, first served
setting-gateway-scheduler-wspt = Weighted shortest prompt
setting-gateway-scheduler-edf = Earliest deadline first
setting-gateway-aging-divisor-secs = Aging divisor (seconds)
setting-gateway-aging-divisor-secs-hint = Scored scheduler: waiting this long adds one point to a request's score. 0 turns aging off.
setting-gateway-affinity-bonus = Cache affinity bonus
setting-gateway-affinity-bonus-hint = Scored scheduler: points for a request whose cache-warm backend has the free slot (0 to 99).
setting-gateway-max-waiters = Maximum waiting requests
setting-gateway-max-waiters-hint = Beyond this many, new requests are refused with 429 at once. 0 means no limit.
setting-gateway-fair-share = Fair sharing within a class
setting-gateway-fair-share-hint = Strict scheduler: people take turns inside a class, so one person’s many requests cannot crowd out everyone else’s.
setting-gateway-fair-share-by = Fair sharing counts
setting-gateway-fair-share-by-hint = Requests: each request is one turn. Tokens: owners are served by the tokens they took (prompt plus twice the output, as the engine reports them), so one person’s long prompts cannot crowd out others’ short ones.
setting-gateway-fair-share-by-requests = Requests
setting-gateway-fair-share-by-tokens = Tokens
setting-gateway-fair-share-half-life-secs = Fair sharing forgets after (half-life, seconds)
setting-gateway-fair-share-half-life-secs-hint = By tokens: what a person took beyond the rest halves every this many seconds. 0 never forgets.
setting-gateway-headroom-secs = Reserved headroom holds for (seconds)
setting-gateway-headroom-secs-hint = A backend’s reserved headroom keeps its last slots from a class while a request of a higher class came for it within this time; with none lately, every class may use them all.
setting-gateway-preemption = Preempt lower classes in prefill
setting-gateway-preemption-hint = A request of a higher class that must wait for a backend cuts one stream of a lower class there that has not sent its first event yet (the engine is still reading its prompt): that one goes back to the head of its class and waits again, its client seeing only a longer wait. Each request is cut at most once; whole (non-streamed) answers are never cut.
setting-gateway-connect-timeout-secs = Connect timeout (seconds)
setting-gateway-connect-timeout-secs-hint = How long to wait for a model server to accept a connection before trying another replica.
setting-gateway-first-byte-timeout-secs = Time to first byte (seconds)
setting-gateway-first-byte-timeout-secs-hint = How long a model server may take to start answering (a long prompt’s prefill takes time, so be generous); beyond it the request fails with 504.
setting-gateway-idle-timeout-secs = Idle timeout between chunks (seconds)
setting-gateway-idle-timeout-secs-hint = How long an answer that has started may pause between two chunks; beyond it the answer ends with an error and the slot is freed.
setting-gateway-media-urls = Media URLs engines may fetch
setting-gateway-media-urls-hint = Engines fetch a request’s image, audio and video URLs themselves, from inside your network. With public hosts only, file: and other schemes, and hosts that are loopback, private, link-local or cloud metadata addresses or names, are refused (400); data: URLs always pass. Host names are not resolved: keep the engines’ outbound traffic firewalled.
setting-gateway-media-urls-public = Public hosts and data: URLs only
setting-gateway-media-urls-any = Any URL (engines fetch what callers send)
setting-activity-retention-days = Keep activity records (days)
setting-activity-retention-days-hint = Older records are deleted once an hour.

## Groups

groups-caption = Gateway groups
groups-empty = There are no groups yet.
group-new = New group
group-new-title = New group
group-edit-title = Edit group “{ $name }”
group-name = Name
group-name-hint = Letters, digits, dots, underscores or dashes. Renaming keeps every reference to it.
group-description = Description
group-roles = Roles
group-members = Members
group-members-filter = Filter users
group-members-none = There are no users yet.
group-members-everyone = Everyone (default group)
group-members-nobody = No members
group-priority-hint = Members inherit the highest priority of all their groups. “Not set” leaves it to their other groups or the system default.
group-priority-none = Not set
group-priority-of = Priority of group { $name }
group-priority-saved = Priority of group “{ $name }” saved.
group-is-admin = Administrators
group-is-admin-hint = Members may administer aiplane.
group-is-default = Default group
group-is-default-hint = Every user belongs to it without being listed.
group-badge-admin = Administrators
group-badge-default = Default
group-actions = Actions for group { $name }
group-delete-confirm = Delete the group “{ $name }”? Its members lose what it granted them.
group-deleted = Group “{ $name }” deleted.
group-saved = Group “{ $name }” saved.
group-created = Group “{ $name }” created.

## Users

users-caption = Local accounts
user-new = New user
user-new-title = New user
user-edit-title = Edit user “{ $name }”
user-create = Create user
user-username = Username
user-username-hint = Letters, digits and @ . + - _ only.
user-email = Email
user-password = Password
user-password-hint = Without a password the account cannot sign in until one is set.
user-new-password = New password
user-new-password-hint = Leave empty to keep the current password.
user-active = Active
user-active-hint = Inactive accounts cannot sign in, and their tokens stop working.
user-status = Status
user-groups = Groups
user-last-login = Last sign-in
user-badge-active = Active
user-badge-inactive = Inactive
user-badge-admin = Administrator
user-is-you = This is you
user-actions = Actions for user { $name }
user-delete-confirm = Delete the account “{ $name }” and all its tokens?
user-deleted = User “{ $name }” deleted.
user-saved = User “{ $name }” saved.
user-created = User “{ $name }” created.

## All tokens

admin-tokens-caption = Every API token
admin-tokens-empty = Nobody has created a token yet.
admin-tokens-filter = Filter by token or owner
admin-tokens-count = Showing { $shown } of { $total } tokens
admin-tokens-priority-disabled = Request prioritization is switched off: these choices take effect once it is enabled under Settings.
admin-token-name = Token
admin-token-owner = Owner
admin-token-state = State
admin-token-effective = In effect
admin-token-priority-of = Priority of token { $name } of { $owner }
admin-token-inherits = Inherits { $priority } from the owner's groups.
admin-token-set-by-admin = Set by { $name } (administrator).
admin-token-set-by-owner = Set by { $name } (owner).
admin-token-actions = Actions for token { $name } of { $owner }
admin-token-revoke-confirm = Revoke “{ $name }” of { $owner }? Programs that use it stop working at once, and { $owner } sees that you revoked it.
admin-token-delete-confirm = Delete “{ $name }” of { $owner } for good? Programs that use it stop working at once.
admin-token-revoked = Token “{ $name }” of { $owner } revoked.
admin-token-deleted = Token “{ $name }” of { $owner } deleted.
