# 后端和池。

backends-title = 后端
backends-intro = 网关背后的模型服务器、它们的容量，以及请求优先级如何转发给它们。
backends-servers = 模型服务器
backends-empty = 尚未登记任何模型服务器。添加一个即可开始处理请求。
backend-new = 添加后端
backend-new-title = 添加后端
backend-edit-title = 编辑后端“{ $name }”
backend-save = 保存后端
backend-saved = 后端“{ $name }”已保存并生效。
backend-deleted = 后端“{ $name }”已删除。
backend-delete-confirm = 删除后端“{ $name }”？它将立即不再接收请求。
backend-actions = 后端 { $name } 的操作

backend-part-connection = 连接
backend-part-capacity = 容量
backend-part-models = 模型
backend-name = 名称
backend-name-hint = 字母、数字、点、下划线或短横线。重命名后所有引用都会保留。
backend-url = 基础 URL
backend-url-hint = 兼容 OpenAI 的地址，通常以 /v1 结尾。
backend-api-key = API 密钥
backend-api-key-hint = 加密存储，之后不再显示。
backend-api-key-keep = 留空则保留已存储的密钥。
backend-api-key-clear = 删除已存储的密钥
backend-key-set = 已设置
backend-key-not-set = 未设置
backend-health-path = 健康检查路径
backend-health-path-hint = 例如 /health。留空则改为探测模型列表。
backend-max-inflight = 最大并发请求数
backend-max-inflight-hint = 请按服务器的实际容量设置：服务器已接收的请求，网关无法再重新排序。
backend-weight = 权重
backend-weight-hint = 在“并发请求最少”策略下，权重越大分到的请求越多（1 到 1000）。
backend-enabled = 已启用
backend-enabled-hint = 维护时关闭：不再发送新请求。
backend-models = 提供的模型
backend-models-hint = 每行一个或用逗号分隔。留空：使用服务器报告的所有模型。
backend-discovered = 服务器报告：{ $models }
backend-models-all-discovered = 全部已报告模型：{ $models }
backend-models-none = 尚未报告任何模型
backend-aliases = 别名
backend-aliases-hint = 每行一个，格式为“别名 = 提供的模型”。
backend-aliases-invalid = 请将每个别名写在单独一行，格式为“别名 = 提供的模型”。
backend-pools = 池
backend-engine = 引擎
backend-not-detected = 尚未识别
backend-inflight = 处理中
backend-inflight-of = { $inflight } / { $max }
backend-healthy = 可访问
backend-unhealthy = 无法访问
backend-health-unknown = 状态未知
backend-disabled = 已停用

backend-priority-mode = 优先级转发
backend-priority-intro = 启用优先级后，网关队列始终按优先级为请求排序。此外，还可以把优先级转发给模型服务器，让它也为自己的队列排序。
backend-priority-auto = 自动
backend-priority-auto-hint = 仅当识别结果证明服务器按优先级调度且方向已知时才转发。
backend-priority-gateway = 仅网关
backend-priority-gateway-hint = 不向服务器发送优先级。适用于任何服务器。
backend-priority-custom = 手动映射
backend-priority-custom-hint = 为每个类别在您选定的请求参数中写入一个整数。优先于自动识别。
backend-mapping = 手动映射
backend-mapping-field = 参数名
backend-mapping-field-hint = 请求的顶层参数，例如“priority”。不能替换 model、messages、tools、stream 或任何生成参数。
backend-mapping-low = 低优先级的值
backend-mapping-medium = 中优先级的值
backend-mapping-high = 高优先级的值
backend-mapping-presets = 预设：
backend-preset-vllm = vLLM（值小者先运行）
backend-preset-sglang = SGLang（值大者先运行）

backend-detection = 识别结果
backend-detection-none = 尚未识别到任何信息。
backend-detection-after-save = 保存后端后将运行识别。
backend-detect-now = 立即识别
backend-detecting = 正在识别 { $name }…
backend-detected = { $name } 识别完成。
detection-engine = 引擎
detection-version = 版本
detection-priority-scheduling = 按优先级调度
detection-schedule-policy = 调度策略
detection-low-values-first = 值小者优先
detection-detected-at = 识别时间
engine-generic = 兼容 OpenAI 的端点
engine-unknown = 未知

forwarding-custom = 作为“{ $field }”转发：低 { $low }，中 { $medium }，高 { $high }（手动映射）。
forwarding-custom-incomplete = 不转发：手动映射需要一个参数名，并为每个类别填写整数。
forwarding-gateway = 不转发：仅网关。网关队列仍会为请求排序。
forwarding-auto-unidentified = 不转发：尚未识别该服务器。
forwarding-auto-vllm = 不转发：vLLM 不报告其调度策略。如果它以 --scheduling-policy priority 运行，请使用手动映射（参数“priority”，值小者优先）。
forwarding-auto-unsupported = 不转发：{ $engine } 未报告按优先级调度。如需转发，请配置手动映射。
forwarding-sglang-flag-unreported = 不转发：SGLang 未报告是否启用了按优先级调度。
forwarding-sglang-flag-off = 不转发：SGLang 运行时未启用 --enable-priority-scheduling。
forwarding-sglang-policy-unreported = 不转发：SGLang 未报告其调度策略。
forwarding-sglang-policy-ignored = 不转发：SGLang 的调度策略“{ $policy }”会忽略优先级（需要 fcfs 或 lof）。
forwarding-sglang-direction-unreported = 不转发：SGLang 未报告是否值小者优先。
forwarding-sglang-smaller-first = 作为“priority”转发（已识别为 SGLang，值小者优先）：低 2，中 1，高 0。
forwarding-sglang-larger-first = 作为“priority”转发（已识别为 SGLang，值大者优先）：低 0，中 1，高 2。

## 池

pools-title = 池
pools-intro = 池把处理某类请求的后端归为一组，并决定谁可以使用它们。
pools-empty = 还没有池。请求只能通过池到达后端。
pool-new = 添加池
pool-new-title = 添加池
pool-edit-title = 编辑池“{ $name }”
pool-save = 保存池
pool-saved = 池“{ $name }”已保存并生效。
pool-deleted = 池“{ $name }”已删除。
pool-delete-confirm = 删除池“{ $name }”？其中的后端会保留。
pool-actions = 池 { $name } 的操作
pool-name = 名称
pool-name-hint = 字母、数字、点、下划线或短横线。重命名后所有引用都会保留。
pool-kind = 类型
pool-kind-chat = 对话与补全
pool-kind-embedding = 嵌入向量
pool-strategy = 策略
pool-strategy-least-inflight = 并发请求最少
pool-strategy-least-inflight-hint = 每个请求发往相对其容量和权重负载最低的后端。
pool-strategy-round-robin = 轮询
pool-strategy-round-robin-hint = 各后端轮流处理。
pool-strategy-prefix-affinity = 前缀亲和
pool-strategy-prefix-affinity-hint = 开头相同的请求发往同一后端，在容量允许时复用其提示缓存。
pool-groups = 允许的用户组
pool-groups-hint = 勾选其成员可以使用此池的组。
pool-groups-everyone = 所有人
pool-fallback = 备用池
pool-fallback-hint = 当此池的所有后端都离线时使用。
pool-fallback-none = 无备用池
pool-backends = 后端
pool-backends-none = 请先添加后端。

## How Messages and Responses are served

backend-surfaces = Messages 与 Responses 的服务方式
backend-surfaces-intro = Claude Code 和 anthropic SDK 使用 Messages API；Codex 和 openai SDK 的 responses 使用 Responses API。自身提供这些 API 的引擎会原样收到请求；其他引擎则收到转换为 chat completions 的请求，回答再转换回来。
backend-surface-messages = Anthropic Messages
backend-surface-responses = OpenAI Responses
backend-surface-auto = 自动（引擎提供时直接转发）
backend-surface-native = 原生：原样转发给引擎
backend-surface-translate = 转换为 chat completions
backend-serving-native = { $surface }：原样转发
backend-serving-translated = { $surface }：转换为 chat
backend-surface-new = 保存时自动检测。
backend-store-responses = 为调用方保留 Responses 状态
backend-store-responses-hint = 允许自身提供 Responses API 的引擎保留已存储的响应和对话（store、previous_response_id）。每个已存储的 id 只属于创建它的调用方；但引擎的存储仍包含所有调用方的文本，因此只对您信任其存储的引擎开启。关闭时，网关发送 store: false，并拒绝需要状态的请求。

## 并发限制：固定，或从引擎学习（max_inflight auto）

backend-concurrency = 并发限制
backend-concurrency-fixed = 固定
backend-concurrency-fixed-hint = 由您设定服务器同时接收的请求数。
backend-concurrency-auto = 从引擎学习（自动）
backend-concurrency-auto-hint = 限制随引擎自身的等待队列、KV 缓存和延迟变化，始终介于下限与上限之间。
backend-capacity-floor = 下限
backend-capacity-floor-hint = 即使引擎已满或其指标已过期，自动模式也绝不低于此值。
backend-capacity-ceiling = 上限
backend-capacity-ceiling-hint = 无论引擎报告还有多少空间，自动模式也绝不高于此值。
backend-capacity-bounds-invalid = 下限（{ $floor }）不能高于上限（{ $ceiling }）。
capacity-auto = 自动
capacity-auto-range = 自动（{ $floor }–{ $ceiling }）
capacity-not-learned = 学习到的限制尚不可知。
capacity-learned = 学习到的限制 { $limit }，{ $reason }
capacity-reason-metrics = 依据引擎指标
capacity-reason-latency = 依据延迟（无指标）
capacity-reason-stale = 指标已过期：保持不变
capacity-reason-floor = 处于下限
capacity-reason-ceiling = 处于上限
capacity-engine = 引擎：运行 { $running }，等待 { $waiting }，KV 缓存 { $kv }
capacity-engine-unread = 尚未读取引擎指标。
capacity-kv-unreported = 未报告
capacity-kv-percent = { $percent }%
capacity-metrics-error = 指标不可用：{ $error }

## 预留余量：更高类别到来时，最后几个位置不给较低类别使用

backend-headroom = 预留余量
backend-headroom-hint = 近期若有更高类别的请求发往此后端（设置：“预留余量保持时间”），其最后几个位置不给较低类别使用；否则任何类别都可使用全部位置。
backend-headroom-low = 低类别不可用的位置数
backend-headroom-medium = 中类别不可用的位置数
backend-headroom-order-invalid = 低类别不可用的位置数（{ $low }）不能少于中类别的（{ $medium }）：较低类别先让出位置。
backend-headroom-kept = 为更高类别保留
backend-headroom-kept-low = 低类别不可用 { $slots } 个位置
backend-headroom-kept-medium = 中类别不可用 { $slots } 个位置
