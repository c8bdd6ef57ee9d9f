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
