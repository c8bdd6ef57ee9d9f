# What is left of one's allowance, on the Tokens page's usage panel.

my-allowance-title = What is left of your allowance
my-allowance-intro = Counted in fixed windows in UTC: the minute, the day, the month. A request in flight holds the most it may use until it ends.
my-allowance-mine = Your limits (all your tokens together)
my-allowance-token = Own limits of token “{ $name }”
my-allowance-unlimited = No limits: you may use as much as you like.
my-allowance-limit = Limit
my-allowance-used = Used
my-allowance-remaining = Remaining
my-allowance-resets = Resets at
my-allowance-of = { $used } of { $limit }
my-allowance-held = held by requests in flight: { $amount }
my-allowance-unknown = not known right now
