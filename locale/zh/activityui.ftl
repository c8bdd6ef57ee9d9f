# 活动筛选、记录详情、新令牌的连接信息和配色方案。

activityui-page-of = 第 { $page } 页，共 { $pages } 页 · { $count } 条记录
activityui-user-placeholder = 名称开头
activityui-model-placeholder = 名称的一部分
activityui-first-byte = 首字节
activityui-details = 请求详情
activityui-open = { $time } 的请求详情
activityui-close = 关闭
activityui-surface = 接口
activityui-path = 路径
activityui-hint = 优先级提示
activityui-score = 分数
activityui-input-tokens = 输入令牌
activityui-output-tokens = 输出令牌
activityui-cached-tokens = 缓存的输入令牌
activityui-error = 错误
activityui-record-id = 记录

activityui-expiry = 有效期
activityui-expiry-never = 永不过期
activityui-expiry-days = { $days } 天后
activityui-expiry-hint = 过期的令牌将无法使用；您可以随时创建新令牌。
activityui-models = 模型
activityui-models-hint = 不勾选则可调用您的组允许的所有模型，或勾选此令牌可调用的模型。
activityui-models-none = 目前没有为您列出的模型；该令牌可调用您的组允许的所有模型。
activityui-connect = 连接程序
activityui-base-url = 基础 URL
activityui-example = 示例
activityui-example-curl = curl
activityui-example-openai = OpenAI Python SDK
activityui-example-anthropic = Anthropic Python SDK
activityui-example-claude = Claude Code（环境变量）
activityui-example-codex = Codex CLI（~/.codex/config.toml）
activityui-example-copy = 复制示例
error-empty-allowlist = 请至少选择一个模型，或不选以允许您的组的所有模型。

activityui-theme = 配色
activityui-theme-system = 跟随系统
activityui-theme-light = 浅色
activityui-theme-dark = 深色
