# Layout, navigation, shared buttons and words, language names.

product-name = aiplane
product-tagline = LLM gateway
page-title = { $page } · aiplane
skip-to-content = Skip to content
nav-label = Main navigation
nav-menu = Menu
nav-tokens = Tokens
nav-playground = Playground
nav-admin = Administration
nav-admin-settings = Settings
nav-admin-groups = Groups
nav-admin-users = Users
nav-admin-tokens = Tokens
nav-admin-backends = Backends
nav-admin-queue = Queue
nav-admin-activity = Activity

language-label = Language
language-name-en = English
language-name-de = German
language-name-fr = French
language-name-es = Spanish
language-name-ru = Russian
language-name-zh = Chinese
signed-in-as = Signed in as { $username }
sign-out = Sign out

action-save = Save
action-cancel = Cancel
action-close = Close
action-create = Create
action-delete = Delete
action-dismiss = Dismiss
action-edit = Edit
column-actions = Actions
status-loading = Loading…
status-saving = Saving…
status-saved = Saved.
value-never = Never
value-none = —
value-yes = Yes
value-no = No
value-on = On
value-off = Off
value-not-reported = Not reported
duration-seconds = { $seconds } s
duration-minutes = { $minutes } min { $seconds } s
duration-hours = { $hours } h { $minutes } min
duration-ms = { $ms } ms

priority-label = Priority
priority-inherit = Inherit
priority-inherit-with = Inherit ({ $priority })
priority-low = Low
priority-medium = Medium
priority-high = High

shell-pending = The controls of this page are not available yet.

forbidden-title = Access denied
forbidden-body = This page is for administrators. Ask an administrator if you need access.
not-found-title = Page not found
not-found-body = There is no page at this address.
back-home = Back to your tokens
