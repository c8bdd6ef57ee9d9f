# Backends and pools.

backends-title = Backends
backends-intro = Model servers behind the gateway, their capacity, and how the request priority is forwarded to them.
backend-priority-mode = Priority forwarding
backend-priority-auto = Automatic
backend-priority-gateway = Gateway only
backend-priority-custom = Manual mapping
