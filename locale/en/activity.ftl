# The per-request activity record.

activity-title = Activity
activity-intro = Recent requests with their priority, queue wait and outcome.
activity-empty = No requests recorded yet.
activity-filters = Filters
activity-caption = Activity records, newest first
activity-user = User
activity-model = Model
activity-class = Class
activity-outcome = Outcome
activity-since = From
activity-until = Until
activity-any = Any
activity-apply = Apply filters
activity-reset = Reset
activity-time = Time
activity-backend = Backend
activity-queue-wait = Queue wait
activity-status = Status
activity-duration = Duration
activity-token = Token { $name }
activity-browser = Browser session
activity-hint = Hint: { $hint }
activity-pages = Pages
activity-previous = Previous
activity-next = Next
activity-page-of = Page { $page } of { $pages } · { $count } records

outcome-immediate = Immediate
outcome-waited = Waited
outcome-expired = Expired
outcome-cancelled = Cancelled
outcome-rejected = Rejected
outcome-client-closed = Client left
outcome-upstream-error = Server failed
outcome-error = Error
outcome-unknown = Unknown
