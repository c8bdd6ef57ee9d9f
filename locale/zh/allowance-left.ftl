# 令牌页面用量面板中自己配额的剩余部分。

my-allowance-title = 您的配额剩余
my-allowance-intro = 按 UTC 固定时段计算：分钟、天、月。进行中的请求在结束前预留其可能用到的最大量。
my-allowance-mine = 您的限额（所有令牌合计）
my-allowance-token = 令牌“{ $name }”自己的限额
my-allowance-unlimited = 无限额：您可以随意使用。
my-allowance-limit = 限额
my-allowance-used = 已用
my-allowance-remaining = 剩余
my-allowance-resets = 重置时间
my-allowance-of = { $used } / { $limit }
my-allowance-held = 进行中的请求预留：{ $amount }
my-allowance-unknown = 暂时未知
