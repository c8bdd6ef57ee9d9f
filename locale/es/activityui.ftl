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
