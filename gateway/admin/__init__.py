"""The control plane on Django: admin API views, serializers, services and selectors, output
shapes, activity store, usage report, consumers, and the receivers of accounts' signals. May
import every layer of gateway, accounts and aiplane.

A new backend field goes in these places, and nowhere else:

- `gateway/models.py` `Backend`, and a migration;
- `serializers/topology.py`: `BackendIn` (the editor's input; the configuration file takes the
  same fields in the same order, aiplane/config_file.py reads them from it) and `BackendOut`
  (the API's output and its schema);
- `shapes.py` `backend_state`: the audit log's shape, on which the configuration file's entry
  (`backend_settings`) and the API's output (`backend_out`) are built; `services.backend_put`
  only when the API's name is not the model's (`models` is `served_models`);
- when the data plane reads it: `BackendSpec` (gateway/runtime/registry.py) and
  `selectors.load_topology`;
- the editor: templates/admin/backends.html, static/js/backends.js, locale/*/backends.ftl.

A pool field likewise: `Pool`, `PoolIn`/`PoolOut`, `shapes.pool_state`, and `PoolSpec` when
the data plane reads it.
"""
