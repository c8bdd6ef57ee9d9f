# Backends and pools.

backends-title = Backends
backends-intro = Model servers behind the gateway, their capacity, and how the request priority is forwarded to them.
backends-servers = Model servers
backends-empty = No model server is registered yet. Add one to start serving requests.
backend-new = Add backend
backend-new-title = Add a backend
backend-edit-title = Edit backend “{ $name }”
backend-save = Save backend
backend-saved = Backend “{ $name }” saved and applied.
backend-deleted = Backend “{ $name }” deleted.
backend-delete-confirm = Delete the backend “{ $name }”? Requests stop going to it at once.
backend-actions = Actions for backend { $name }

backend-part-connection = Connection
backend-part-capacity = Capacity
backend-part-models = Models
backend-name = Name
backend-name-hint = Letters, digits, dots, underscores or dashes. Renaming keeps every reference to it.
backend-url = Base URL
backend-url-hint = The OpenAI-compatible address, usually ending in /v1.
backend-api-key = API key
backend-api-key-hint = Stored encrypted and never shown again.
backend-api-key-keep = Leave empty to keep the stored key.
backend-api-key-clear = Remove the stored key
backend-key-set = Set
backend-key-not-set = Not set
backend-health-path = Health check path
backend-health-path-hint = For example /health. Empty: the model list is probed instead.
backend-max-inflight = Maximum requests in flight
backend-max-inflight-hint = Match the server's real capacity: the gateway cannot reorder requests a server has already accepted.
backend-weight = Weight
backend-weight-hint = With the “fewest requests in flight” strategy, a larger weight takes a larger share (1 to 1000).
backend-enabled = Enabled
backend-enabled-hint = Switch off for maintenance: no new requests are sent.
backend-models = Served models
backend-models-hint = One per line or separated by commas. Empty: every model the server reports.
backend-discovered = The server reports: { $models }
backend-models-all-discovered = All reported: { $models }
backend-models-none = None reported yet
backend-aliases = Aliases
backend-aliases-hint = One per line as “alias = served model”.
backend-aliases-invalid = Write each alias on its own line as “alias = served model”.
backend-pools = Pools
backend-engine = Engine
backend-not-detected = Not detected yet
backend-inflight = In flight
backend-inflight-of = { $inflight } of { $max }
backend-healthy = Healthy
backend-unhealthy = Unreachable
backend-health-unknown = Health unknown
backend-disabled = Disabled

backend-priority-mode = Priority forwarding
backend-priority-intro = The gateway queue orders requests by priority whenever prioritization is on. In addition, the priority can be passed on to the model server so that it orders its own queue too.
backend-priority-auto = Automatic
backend-priority-auto-hint = Forward only when detection proved that the server schedules by priority and in which direction.
backend-priority-gateway = Gateway only
backend-priority-gateway-hint = Send no priority to the server. Works with every server.
backend-priority-custom = Manual mapping
backend-priority-custom-hint = Put a whole number for each class into a request parameter of your choice. Overrides detection.
backend-mapping = Manual mapping
backend-mapping-field = Parameter name
backend-mapping-field-hint = A top-level request parameter, for example “priority”. It may not replace model, messages, tools, stream or a generation control.
backend-mapping-low = Value for low
backend-mapping-medium = Value for medium
backend-mapping-high = Value for high
backend-mapping-presets = Presets:
backend-preset-vllm = vLLM (lower runs first)
backend-preset-sglang = SGLang (higher runs first)

backend-detection = What detection found
backend-detection-none = Nothing detected yet.
backend-detection-after-save = Detection runs once the backend is saved.
backend-detect-now = Detect now
backend-detecting = Detecting { $name }…
backend-detected = Detection of { $name } finished.
detection-engine = Engine
detection-version = Version
detection-priority-scheduling = Priority scheduling
detection-schedule-policy = Schedule policy
detection-low-values-first = Lower values first
detection-detected-at = Detected
engine-generic = OpenAI-compatible endpoint
engine-unknown = Unknown

forwarding-custom = Forwarded as “{ $field }”: low { $low }, medium { $medium }, high { $high } (manual mapping).
forwarding-custom-incomplete = Not forwarded: the manual mapping needs a parameter name and a whole number for each class.
forwarding-gateway = Not forwarded: gateway only. The gateway queue still orders the requests.
forwarding-auto-unidentified = Not forwarded: the server has not been identified yet.
forwarding-auto-vllm = Not forwarded: vLLM does not report its scheduling policy. If it runs with --scheduling-policy priority, use a manual mapping (parameter “priority”, lower values first).
forwarding-auto-unsupported = Not forwarded: { $engine } does not report priority scheduling. Configure a manual mapping to forward.
forwarding-sglang-flag-unreported = Not forwarded: SGLang did not report whether priority scheduling is enabled.
forwarding-sglang-flag-off = Not forwarded: SGLang runs without --enable-priority-scheduling.
forwarding-sglang-policy-unreported = Not forwarded: SGLang did not report its schedule policy.
forwarding-sglang-policy-ignored = Not forwarded: SGLang's schedule policy “{ $policy }” ignores priority (it needs fcfs or lof).
forwarding-sglang-direction-unreported = Not forwarded: SGLang did not report whether lower values run first.
forwarding-sglang-smaller-first = Forwarded as “priority” (detected SGLang, lower values first): low 2, medium 1, high 0.
forwarding-sglang-larger-first = Forwarded as “priority” (detected SGLang, higher values first): low 0, medium 1, high 2.

## Pools

pools-title = Pools
pools-intro = A pool groups backends for a kind of request and decides who may use them.
pools-empty = No pool yet. Requests reach a backend only through a pool.
pool-new = Add pool
pool-new-title = Add a pool
pool-edit-title = Edit pool “{ $name }”
pool-save = Save pool
pool-saved = Pool “{ $name }” saved and applied.
pool-deleted = Pool “{ $name }” deleted.
pool-delete-confirm = Delete the pool “{ $name }”? Its backends stay.
pool-actions = Actions for pool { $name }
pool-name = Name
pool-name-hint = Letters, digits, dots, underscores or dashes. Renaming keeps every reference to it.
pool-kind = Kind
pool-kind-chat = Chat and completions
pool-kind-embedding = Embeddings
pool-strategy = Strategy
pool-strategy-least-inflight = Fewest requests in flight
pool-strategy-least-inflight-hint = Each request goes to the backend with the lowest load for its capacity and weight.
pool-strategy-round-robin = Round robin
pool-strategy-round-robin-hint = The backends take turns.
pool-strategy-prefix-affinity = Prefix affinity
pool-strategy-prefix-affinity-hint = Requests that start alike go to the same backend, to reuse its prompt cache where capacity permits.
pool-groups = Allowed groups
pool-groups-hint = Check the groups whose members may use this pool.
pool-groups-everyone = Everyone
pool-fallback = Fallback pool
pool-fallback-hint = Used when every backend of this pool is offline.
pool-fallback-none = No fallback
pool-backends = Backends
pool-backends-none = Add a backend first.

## How Messages and Responses are served

backend-surfaces = How Messages and Responses are served
backend-surfaces-intro = Claude Code and the anthropic SDK speak the Messages API; Codex and the openai SDK’s responses speak the Responses API. An engine that serves them itself gets them passed through; any other gets them translated to chat completions and back.
backend-surface-messages = Anthropic Messages
backend-surface-responses = OpenAI Responses
backend-surface-auto = Automatic (native where the engine serves it)
backend-surface-native = Native: pass through to the engine
backend-surface-translate = Translate to chat completions
backend-serving-native = { $surface }: passed through
backend-serving-translated = { $surface }: translated to chat
backend-surface-new = Detected when saved.
backend-store-responses = Keep Responses state for callers
backend-store-responses-hint = Lets an engine that serves the Responses API itself keep stored responses and conversations (store, previous_response_id). Each stored id stays the caller’s who created it; the engine’s store still holds every caller’s text, so turn it on only for an engine whose store you trust. Off, the gateway sends store: false and refuses requests that need state.

## The concurrency limit: fixed, or learned from the engine (max_inflight auto)

backend-concurrency = Concurrency limit
backend-concurrency-fixed = Fixed
backend-concurrency-fixed-hint = You set how many requests the server gets at once.
backend-concurrency-auto = Learned from the engine (auto)
backend-concurrency-auto-hint = The limit follows the engine's own waiting queue, KV cache and latency, always between the floor and the ceiling.
backend-capacity-floor = Floor
backend-capacity-floor-hint = Auto never goes below this, even while the engine is full or its metrics are stale.
backend-capacity-ceiling = Ceiling
backend-capacity-ceiling-hint = Auto never goes above this, however much room the engine reports.
backend-capacity-bounds-invalid = The floor ({ $floor }) must not be above the ceiling ({ $ceiling }).
capacity-auto = auto
capacity-auto-range = auto ({ $floor }–{ $ceiling })
capacity-not-learned = Learned limit not known yet.
capacity-learned = Learned limit { $limit }, { $reason }
capacity-reason-metrics = from the engine's metrics
capacity-reason-latency = from latency (no metrics)
capacity-reason-stale = metrics stale: holding
capacity-reason-floor = at floor
capacity-reason-ceiling = at ceiling
capacity-engine = Engine: running { $running }, waiting { $waiting }, KV cache { $kv }
capacity-engine-unread = The engine's metrics have not been read yet.
capacity-kv-unreported = not reported
capacity-kv-percent = { $percent }%
capacity-metrics-error = Metrics unusable: { $error }

## Reserved headroom: the last slots kept from the lower classes while a higher one comes

backend-headroom = Reserved headroom
backend-headroom-hint = While a request of a higher class came for this backend lately (Settings: “Reserved headroom holds for”), its last slots are kept from the lower classes; otherwise every class may use them all.
backend-headroom-low = Slots kept from low
backend-headroom-medium = Slots kept from medium
backend-headroom-order-invalid = Slots kept from low ({ $low }) must be at least as many as from medium ({ $medium }): a lower class gives way first.
backend-headroom-kept = Kept for higher classes
backend-headroom-kept-low = { $slots ->
    [one] { $slots } slot from low
   *[other] { $slots } slots from low
}
backend-headroom-kept-medium = { $slots ->
    [one] { $slots } slot from medium
   *[other] { $slots } slots from medium
}
