# The per-request activity record.

activity-title = Activity
activity-intro = Recent requests with their priority, queue wait and outcome.
activity-empty = No requests recorded yet.
