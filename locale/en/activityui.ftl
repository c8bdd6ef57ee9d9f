# Activity filters, the record detail view, the token connection details and the colour scheme.

activityui-page-of = Page { $page } of { $pages } · { $count ->
    [one] { $count } record
   *[other] { $count } records
}
activityui-user-placeholder = Start of the name
activityui-model-placeholder = Part of the name
activityui-first-byte = First byte
activityui-details = Request details
activityui-open = Details of the request at { $time }
activityui-close = Close
activityui-surface = Surface
activityui-path = Path
activityui-hint = Priority hint
activityui-score = Score
activityui-input-tokens = Input tokens
activityui-output-tokens = Output tokens
activityui-cached-tokens = Cached input tokens
activityui-error = Error
activityui-record-id = Record

activityui-expiry = Expires
activityui-expiry-never = Never
activityui-expiry-days = { $days ->
    [one] In { $days } day
   *[other] In { $days } days
}
activityui-expiry-hint = An expired token stops working; you can create another at any time.
activityui-models = Models
activityui-models-hint = Leave all unchecked for every model your groups allow, or check the ones this token may call.
activityui-models-none = No models are listed for you at the moment; the token will reach every model your groups allow.
activityui-connect = Connect a program
activityui-base-url = Base URL
activityui-example = Example
activityui-example-curl = curl
activityui-example-openai = OpenAI Python SDK
activityui-example-anthropic = Anthropic Python SDK
activityui-example-claude = Claude Code (environment variables)
activityui-example-codex = Codex CLI (~/.codex/config.toml)
activityui-example-copy = Copy example
error-empty-allowlist = Choose at least one model, or none for every model your groups allow.

activityui-theme = Colours
activityui-theme-system = System
activityui-theme-light = Light
activityui-theme-dark = Dark
