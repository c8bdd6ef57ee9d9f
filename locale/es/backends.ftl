# Servidores de modelos y pools.

backends-title = Servidores de modelos
backends-intro = Los servidores de modelos detrás de la pasarela, su capacidad y cómo se les transmite la prioridad de cada solicitud.
backends-servers = Servidores registrados
backends-empty = Todavía no hay ningún servidor de modelos registrado. Añada uno para empezar a atender solicitudes.
backend-new = Añadir servidor
backend-new-title = Añadir un servidor
backend-edit-title = Editar el servidor «{ $name }»
backend-save = Guardar servidor
backend-saved = Servidor «{ $name }» guardado y aplicado.
backend-deleted = Servidor «{ $name }» eliminado.
backend-delete-confirm = ¿Eliminar el servidor «{ $name }»? Deja de recibir solicitudes de inmediato.
backend-actions = Acciones para el servidor { $name }

backend-part-connection = Conexión
backend-part-capacity = Capacidad
backend-part-models = Modelos
backend-name = Nombre
backend-name-hint = Letras, cifras, puntos, guiones bajos o guiones. Al renombrarlo se conservan todas las referencias.
backend-url = URL base
backend-url-hint = La dirección compatible con OpenAI, normalmente terminada en /v1.
backend-api-key = Clave de API
backend-api-key-hint = Se guarda cifrada y no se vuelve a mostrar.
backend-api-key-keep = Déjela vacía para conservar la clave guardada.
backend-api-key-clear = Quitar la clave guardada
backend-key-set = Definida
backend-key-not-set = Sin definir
backend-health-path = Ruta de la comprobación de estado
backend-health-path-hint = Por ejemplo /health. Vacía: se consulta la lista de modelos en su lugar.
backend-max-inflight = Máximo de solicitudes en curso
backend-max-inflight-hint = Ajústelo a la capacidad real del servidor: la pasarela no puede reordenar solicitudes que un servidor ya aceptó.
backend-weight = Peso
backend-weight-hint = Con la estrategia «Menos solicitudes en curso», un peso mayor recibe una parte mayor (de 1 a 1000).
backend-enabled = Activado
backend-enabled-hint = Desactívelo por mantenimiento: no se envían solicitudes nuevas.
backend-models = Modelos servidos
backend-models-hint = Uno por línea o separados por comas. Vacío: todos los modelos que anuncia el servidor.
backend-discovered = El servidor anuncia: { $models }
backend-models-all-discovered = Todos los anunciados: { $models }
backend-models-none = Aún no anuncia ninguno
backend-aliases = Alias
backend-aliases-hint = Uno por línea con la forma «alias = modelo servido».
backend-aliases-invalid = Escriba cada alias en su propia línea con la forma «alias = modelo servido».
backend-pools = Pools
backend-engine = Motor
backend-not-detected = Aún sin identificar
backend-inflight = En curso
backend-inflight-of = { $inflight } de { $max }
backend-healthy = Accesible
backend-unhealthy = Inaccesible
backend-health-unknown = Estado desconocido
backend-disabled = Desactivado

backend-priority-mode = Transmisión de la prioridad
backend-priority-intro = La cola de la pasarela ordena las solicitudes por prioridad siempre que la priorización esté activada. Además, la prioridad puede transmitirse al servidor de modelos para que también ordene su propia cola.
backend-priority-auto = Automática
backend-priority-auto-hint = Transmitir solo si la detección demostró que el servidor planifica por prioridad y en qué sentido.
backend-priority-gateway = Solo en la pasarela
backend-priority-gateway-hint = No enviar ninguna prioridad al servidor. Funciona con cualquier servidor.
backend-priority-custom = Asignación manual
backend-priority-custom-hint = Poner un número entero por clase en un parámetro de la solicitud que usted elija. Tiene preferencia sobre la detección.
backend-mapping = Asignación manual
backend-mapping-field = Nombre del parámetro
backend-mapping-field-hint = Un parámetro de primer nivel de la solicitud, por ejemplo «priority». No puede sustituir model, messages, tools, stream ni un ajuste de generación.
backend-mapping-low = Valor para baja
backend-mapping-medium = Valor para media
backend-mapping-high = Valor para alta
backend-mapping-presets = Valores de ejemplo:
backend-preset-vllm = vLLM (el menor va primero)
backend-preset-sglang = SGLang (el mayor va primero)

backend-detection = Lo que encontró la detección
backend-detection-none = Aún no se ha detectado nada.
backend-detection-after-save = La detección se ejecuta una vez guardado el servidor.
backend-detect-now = Detectar ahora
backend-detecting = Detectando { $name }…
backend-detected = Detección de { $name } terminada.
detection-engine = Motor
detection-version = Versión
detection-priority-scheduling = Planificación por prioridad
detection-schedule-policy = Política de planificación
detection-low-values-first = Valores menores primero
detection-detected-at = Detectado
engine-generic = Punto de acceso compatible con OpenAI
engine-unknown = Desconocido

forwarding-custom = Se transmite como «{ $field }»: baja { $low }, media { $medium }, alta { $high } (asignación manual).
forwarding-custom-incomplete = No se transmite: la asignación manual necesita un nombre de parámetro y un número entero para cada clase.
forwarding-gateway = No se transmite: solo en la pasarela. La cola de la pasarela sigue ordenando las solicitudes.
forwarding-auto-unidentified = No se transmite: el servidor aún no se ha identificado.
forwarding-auto-vllm = No se transmite: vLLM no informa de su política de planificación. Si se ejecuta con --scheduling-policy priority, use una asignación manual (parámetro «priority», valores menores primero).
forwarding-auto-unsupported = No se transmite: { $engine } no informa de planificación por prioridad. Configure una asignación manual para transmitirla.
forwarding-sglang-flag-unreported = No se transmite: SGLang no informó de si la planificación por prioridad está activada.
forwarding-sglang-flag-off = No se transmite: SGLang se ejecuta sin --enable-priority-scheduling.
forwarding-sglang-policy-unreported = No se transmite: SGLang no informó de su política de planificación.
forwarding-sglang-policy-ignored = No se transmite: la política «{ $policy }» de SGLang ignora la prioridad (necesita fcfs o lof).
forwarding-sglang-direction-unreported = No se transmite: SGLang no informó de si los valores menores van primero.
forwarding-sglang-smaller-first = Se transmite como «priority» (SGLang detectado, valores menores primero): baja 2, media 1, alta 0.
forwarding-sglang-larger-first = Se transmite como «priority» (SGLang detectado, valores mayores primero): baja 0, media 1, alta 2.

## Pools

pools-title = Pools
pools-intro = Un pool agrupa servidores para un tipo de solicitud y decide quién puede usarlos.
pools-empty = Todavía no hay pools. Las solicitudes solo llegan a un servidor a través de un pool.
pool-new = Añadir pool
pool-new-title = Añadir un pool
pool-edit-title = Editar el pool «{ $name }»
pool-save = Guardar pool
pool-saved = Pool «{ $name }» guardado y aplicado.
pool-deleted = Pool «{ $name }» eliminado.
pool-delete-confirm = ¿Eliminar el pool «{ $name }»? Sus servidores se conservan.
pool-actions = Acciones para el pool { $name }
pool-name = Nombre
pool-name-hint = Letras, cifras, puntos, guiones bajos o guiones. Al renombrarlo se conservan todas las referencias.
pool-kind = Tipo
pool-kind-chat = Chat y completado
pool-kind-embedding = Embeddings (vectores)
pool-strategy = Estrategia
pool-strategy-least-inflight = Menos solicitudes en curso
pool-strategy-least-inflight-hint = Cada solicitud va al servidor con menos carga en relación con su capacidad y su peso.
pool-strategy-round-robin = Por turnos
pool-strategy-round-robin-hint = Los servidores se turnan.
pool-strategy-prefix-affinity = Afinidad de prefijo
pool-strategy-prefix-affinity-hint = Las solicitudes que empiezan igual van al mismo servidor para reutilizar su caché de prompts cuando la capacidad lo permite.
pool-groups = Grupos permitidos
pool-groups-hint = Marque los grupos cuyos miembros pueden usar este pool.
pool-groups-everyone = Todos
pool-fallback = Pool de respaldo
pool-fallback-hint = Se usa cuando todos los servidores de este pool están fuera de servicio.
pool-fallback-none = Sin respaldo
pool-backends = Servidores
pool-backends-none = Añada primero un servidor.

## How Messages and Responses are served

backend-surfaces = Cómo se sirven Messages y Responses
backend-surfaces-intro = Claude Code y el SDK de anthropic hablan la API Messages; Codex y las responses del SDK de openai hablan la API Responses. Un motor que las sirve por sí mismo las recibe tal cual; cualquier otro las recibe traducidas a chat completions y de vuelta.
backend-surface-messages = Anthropic Messages
backend-surface-responses = OpenAI Responses
backend-surface-auto = Automático (nativo donde el motor la sirve)
backend-surface-native = Nativo: se pasa tal cual al motor
backend-surface-translate = Traducir a chat completions
backend-serving-native = { $surface }: se pasa tal cual
backend-serving-translated = { $surface }: traducido a chat
backend-surface-new = Se detecta al guardar.
backend-store-responses = Guardar el estado de Responses para los llamantes
backend-store-responses-hint = Permite que un motor que sirve la API Responses por sí mismo guarde respuestas y conversaciones (store, previous_response_id). Cada id guardado sigue siendo de quien lo creó; el almacén del motor guarda aun así los textos de todos, así que actívelo solo para un motor cuyo almacén sea de confianza. Desactivado, la pasarela envía store: false y rechaza las solicitudes que necesitan estado.

## El límite de solicitudes simultáneas: fijo, o aprendido del motor (max_inflight auto)

backend-concurrency = Límite de solicitudes simultáneas
backend-concurrency-fixed = Fijo
backend-concurrency-fixed-hint = Usted fija cuántas solicitudes recibe el servidor a la vez.
backend-concurrency-auto = Aprendido del motor (auto)
backend-concurrency-auto-hint = El límite sigue la cola de espera propia del motor, su caché KV y la latencia, siempre entre el mínimo y el máximo.
backend-capacity-floor = Mínimo
backend-capacity-floor-hint = El modo auto nunca baja de aquí, ni cuando el motor está lleno o sus métricas están desactualizadas.
backend-capacity-ceiling = Máximo
backend-capacity-ceiling-hint = El modo auto nunca sube de aquí, por mucho espacio que el motor indique.
backend-capacity-bounds-invalid = El mínimo ({ $floor }) no puede ser mayor que el máximo ({ $ceiling }).
capacity-auto = automático
capacity-auto-range = automático ({ $floor }–{ $ceiling })
capacity-not-learned = El límite aprendido aún no se conoce.
capacity-learned = Límite aprendido { $limit }, { $reason }
capacity-reason-metrics = según las métricas del motor
capacity-reason-latency = según la latencia (sin métricas)
capacity-reason-stale = métricas desactualizadas: se mantiene
capacity-reason-floor = en el mínimo
capacity-reason-ceiling = en el máximo
capacity-engine = Motor: en curso { $running }, en espera { $waiting }, caché KV { $kv }
capacity-engine-unread = Las métricas del motor aún no se han leído.
capacity-kv-unreported = no informado
capacity-kv-percent = { $percent } %
capacity-metrics-error = Métricas inutilizables: { $error }

## Reserva: las últimas plazas vedadas a las clases inferiores mientras llega una superior

backend-headroom = Reserva
backend-headroom-hint = Mientras haya llegado hace poco una solicitud de una clase superior para este backend (Ajustes: «Duración de la reserva»), sus últimas plazas quedan vedadas a las clases inferiores; si no, cada clase puede usarlas todas.
backend-headroom-low = Plazas vedadas a la clase baja
backend-headroom-medium = Plazas vedadas a la clase media
backend-headroom-order-invalid = Las plazas vedadas a la clase baja ({ $low }) deben ser al menos tantas como las vedadas a la media ({ $medium }): una clase inferior cede primero.
backend-headroom-kept = Reservado para clases superiores
backend-headroom-kept-low = { $slots ->
    [one] { $slots } plaza vedada a la clase baja
   *[other] { $slots } plazas vedadas a la clase baja
}
backend-headroom-kept-medium = { $slots ->
    [one] { $slots } plaza vedada a la clase media
   *[other] { $slots } plazas vedadas a la clase media
}
