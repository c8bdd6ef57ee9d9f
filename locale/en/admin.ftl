# Administration: settings, groups, users, all tokens.

admin-settings-title = Settings
admin-settings-intro = Operator settings: request prioritization, the system default priority and how long requests may wait for capacity.
admin-groups-title = Groups
admin-groups-intro = Gateway groups decide who may use which models, who administers aiplane, and the priority of their members.
admin-users-title = Users
admin-users-intro = Local accounts that can sign in to aiplane.
admin-tokens-title = All tokens
admin-tokens-intro = Every API token with its owner and its priority.

admin-section-access = Access
admin-section-gateway = Gateway
setting-priority-enabled = Enable request prioritization
setting-priority-default = System default priority
setting-upstream-wait = Wait budget in seconds
