# Personal API tokens.

tokens-title = API tokens
tokens-intro = Programs call the gateway with one of these tokens as a bearer token. A token inherits your priority unless you choose another one for it.
tokens-empty = You have no tokens yet.
tokens-create = Create token
tokens-list-label = Your tokens
tokens-owner-priority = Your inherited priority: { $priority }
tokens-max-priority = Highest priority you can choose: { $priority }
tokens-priority-disabled = Request prioritization is switched off at the moment. Your choices take effect once an administrator enables it.

token-prefix = Starts with
token-created = Created
token-last-used = Last used
token-expires = Expires
token-status-active = Active
token-status-revoked = Revoked
token-status-expired = Expired
token-priority-saved = Priority saved.
token-actions = Actions for { $name }
token-revoke = Revoke
token-rotate = Rotate
token-delete = Delete
token-revoke-confirm = Revoke “{ $name }”? Programs that use it stop working at once.
token-rotate-confirm = Rotate “{ $name }”? The current secret stops working and a new one is shown once.
token-delete-confirm = Delete “{ $name }” for good?
token-revoked = Token “{ $name }” revoked.
token-deleted = Token “{ $name }” deleted.
token-revoked-by = Revoked by { $name } on { $date }.
token-revoked-on = Revoked on { $date }.

create-title = Create a token
create-name = Name
create-name-hint = For example the program or machine that will use it.
create-priority-hint = “Inherit” follows your groups. Choose a lower priority for background work.
create-submit = Create token

secret-title = Copy your token now
secret-once = This is the only time the token is shown. Store it somewhere safe.
secret-label = New token
secret-copy = Copy
secret-copied = Copied to the clipboard.
secret-copy-failed = Copying failed. Select the token and copy it by hand.
secret-done = Done
