# Filtros de la actividad, el detalle de un registro, los datos de conexión de los tokens y el esquema de colores.

activityui-page-of = Página { $page } de { $pages } · { $count ->
    [one] { $count } registro
    [many] { $count } de registros
   *[other] { $count } registros
}
activityui-user-placeholder = Inicio del nombre
activityui-model-placeholder = Parte del nombre
activityui-first-byte = Primer byte
activityui-details = Detalles de la solicitud
activityui-open = Detalles de la solicitud de { $time }
activityui-close = Cerrar
activityui-surface = Interfaz
activityui-path = Ruta
activityui-hint = Indicación de prioridad
activityui-score = Puntuación
activityui-input-tokens = Tokens de entrada
activityui-output-tokens = Tokens de salida
activityui-cached-tokens = Tokens de entrada en caché
activityui-error = Error
activityui-record-id = Registro

activityui-expiry = Caduca
activityui-expiry-never = Nunca
activityui-expiry-days = { $days ->
    [one] En { $days } día
   *[other] En { $days } días
}
activityui-expiry-hint = Un token caducado deja de funcionar; puede crear otro en cualquier momento.
activityui-models = Modelos
activityui-models-hint = No marque ninguno para todos los modelos que permiten sus grupos, o marque los que este token puede llamar.
activityui-models-none = Ahora mismo no hay modelos disponibles para usted; el token llegará a todos los modelos que permiten sus grupos.
activityui-connect = Conectar un programa
activityui-base-url = URL base
activityui-example = Ejemplo
activityui-example-curl = curl
activityui-example-openai = SDK de Python de OpenAI
activityui-example-anthropic = SDK de Python de Anthropic
activityui-example-claude = Claude Code (variables de entorno)
activityui-example-codex = Codex CLI (~/.codex/config.toml)
activityui-example-copy = Copiar el ejemplo
error-empty-allowlist = Elija al menos un modelo, o ninguno para todos los modelos que permiten sus grupos.

activityui-theme = Colores
activityui-theme-system = Sistema
activityui-theme-light = Claro
activityui-theme-dark = Oscuro
