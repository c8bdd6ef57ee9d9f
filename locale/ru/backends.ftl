# Серверы моделей и пулы.

backends-title = Серверы моделей
backends-intro = Серверы моделей за шлюзом, их пропускная способность и то, как им передаётся приоритет запроса.
backends-servers = Зарегистрированные серверы
backends-empty = Ни одного сервера моделей ещё не зарегистрировано. Добавьте сервер, чтобы начать обслуживать запросы.
backend-new = Добавить сервер
backend-new-title = Добавить сервер
backend-edit-title = Изменить сервер «{ $name }»
backend-save = Сохранить сервер
backend-saved = Сервер «{ $name }» сохранён и применён.
backend-deleted = Сервер «{ $name }» удалён.
backend-delete-confirm = Удалить сервер «{ $name }»? Запросы на него сразу перестанут поступать.
backend-actions = Действия с сервером { $name }

backend-part-connection = Подключение
backend-part-capacity = Пропускная способность
backend-part-models = Модели
backend-name = Название
backend-name-hint = Буквы, цифры, точки, подчёркивания или дефисы. При переименовании все ссылки на него сохраняются.
backend-url = Базовый URL
backend-url-hint = Адрес, совместимый с OpenAI, обычно заканчивается на /v1.
backend-api-key = Ключ API
backend-api-key-hint = Хранится в зашифрованном виде и больше не показывается.
backend-api-key-keep = Оставьте пустым, чтобы сохранить текущий ключ.
backend-api-key-clear = Удалить сохранённый ключ
backend-key-set = Задан
backend-key-not-set = Не задан
backend-health-path = Путь проверки состояния
backend-health-path-hint = Например, /health. Если пусто, вместо этого запрашивается список моделей.
backend-max-inflight = Максимум одновременных запросов
backend-max-inflight-hint = Укажите реальную пропускную способность сервера: шлюз не может переупорядочить запросы, которые сервер уже принял.
backend-weight = Вес
backend-weight-hint = При стратегии «Меньше всего запросов в работе» сервер с большим весом получает большую долю (от 1 до 1000).
backend-enabled = Включён
backend-enabled-hint = Выключите на время обслуживания: новые запросы отправляться не будут.
backend-models = Обслуживаемые модели
backend-models-hint = По одной в строке или через запятую. Если пусто — все модели, о которых сообщает сервер.
backend-discovered = Сервер сообщает: { $models }
backend-models-all-discovered = Все заявленные: { $models }
backend-models-none = Пока ни одной
backend-aliases = Псевдонимы
backend-aliases-hint = По одному в строке в виде «псевдоним = модель».
backend-aliases-invalid = Запишите каждый псевдоним в отдельной строке в виде «псевдоним = модель».
backend-pools = Пулы
backend-engine = Движок
backend-not-detected = Ещё не определён
backend-inflight = В работе
backend-inflight-of = { $inflight } из { $max }
backend-healthy = Доступен
backend-unhealthy = Недоступен
backend-health-unknown = Состояние неизвестно
backend-disabled = Выключен

backend-priority-mode = Передача приоритета
backend-priority-intro = Очередь шлюза упорядочивает запросы по приоритету, когда приоритизация включена. Кроме того, приоритет можно передавать серверу моделей, чтобы он тоже упорядочивал свою очередь.
backend-priority-auto = Автоматически
backend-priority-auto-hint = Передавать, только если определение показало, что сервер планирует по приоритету, и известно направление.
backend-priority-gateway = Только в шлюзе
backend-priority-gateway-hint = Не отправлять серверу приоритет. Работает с любым сервером.
backend-priority-custom = Ручное сопоставление
backend-priority-custom-hint = Записывать целое число для каждого класса в выбранный вами параметр запроса. Важнее результатов определения.
backend-mapping = Ручное сопоставление
backend-mapping-field = Имя параметра
backend-mapping-field-hint = Параметр верхнего уровня запроса, например «priority». Он не может заменять model, messages, tools, stream или параметр генерации.
backend-mapping-low = Значение для низкого
backend-mapping-medium = Значение для среднего
backend-mapping-high = Значение для высокого
backend-mapping-presets = Готовые варианты:
backend-preset-vllm = vLLM (меньшее — раньше)
backend-preset-sglang = SGLang (большее — раньше)

backend-detection = Что обнаружено
backend-detection-none = Пока ничего не обнаружено.
backend-detection-after-save = Определение запустится после сохранения сервера.
backend-detect-now = Определить сейчас
backend-detecting = Определяется { $name }…
backend-detected = Определение { $name } завершено.
detection-engine = Движок
detection-version = Версия
detection-priority-scheduling = Планирование по приоритету
detection-schedule-policy = Политика планирования
detection-low-values-first = Меньшие значения раньше
detection-detected-at = Определено
engine-generic = Конечная точка, совместимая с OpenAI
engine-unknown = Неизвестно

forwarding-custom = Передаётся как «{ $field }»: низкий { $low }, средний { $medium }, высокий { $high } (ручное сопоставление).
forwarding-custom-incomplete = Не передаётся: для ручного сопоставления нужны имя параметра и целое число для каждого класса.
forwarding-gateway = Не передаётся: только в шлюзе. Очередь шлюза всё равно упорядочивает запросы.
forwarding-auto-unidentified = Не передаётся: сервер ещё не определён.
forwarding-auto-vllm = Не передаётся: vLLM не сообщает свою политику планирования. Если он запущен с --scheduling-policy priority, используйте ручное сопоставление (параметр «priority», меньшие значения раньше).
forwarding-auto-unsupported = Не передаётся: { $engine } не сообщает о планировании по приоритету. Настройте ручное сопоставление, чтобы передавать его.
forwarding-sglang-flag-unreported = Не передаётся: SGLang не сообщил, включено ли планирование по приоритету.
forwarding-sglang-flag-off = Не передаётся: SGLang запущен без --enable-priority-scheduling.
forwarding-sglang-policy-unreported = Не передаётся: SGLang не сообщил свою политику планирования.
forwarding-sglang-policy-ignored = Не передаётся: политика «{ $policy }» в SGLang не учитывает приоритет (нужна fcfs или lof).
forwarding-sglang-direction-unreported = Не передаётся: SGLang не сообщил, идут ли меньшие значения раньше.
forwarding-sglang-smaller-first = Передаётся как «priority» (обнаружен SGLang, меньшие значения раньше): низкий 2, средний 1, высокий 0.
forwarding-sglang-larger-first = Передаётся как «priority» (обнаружен SGLang, большие значения раньше): низкий 0, средний 1, высокий 2.

## Пулы

pools-title = Пулы
pools-intro = Пул объединяет серверы для определённого вида запросов и определяет, кто может ими пользоваться.
pools-empty = Пулов пока нет. Запросы попадают на сервер только через пул.
pool-new = Добавить пул
pool-new-title = Добавить пул
pool-edit-title = Изменить пул «{ $name }»
pool-save = Сохранить пул
pool-saved = Пул «{ $name }» сохранён и применён.
pool-deleted = Пул «{ $name }» удалён.
pool-delete-confirm = Удалить пул «{ $name }»? Его серверы останутся.
pool-actions = Действия с пулом { $name }
pool-name = Название
pool-name-hint = Буквы, цифры, точки, подчёркивания или дефисы. При переименовании все ссылки на него сохраняются.
pool-kind = Вид
pool-kind-chat = Чат и дополнение текста
pool-kind-embedding = Эмбеддинги
pool-strategy = Стратегия
pool-strategy-least-inflight = Меньше всего запросов в работе
pool-strategy-least-inflight-hint = Каждый запрос идёт на сервер с наименьшей нагрузкой относительно его пропускной способности и веса.
pool-strategy-round-robin = По кругу
pool-strategy-round-robin-hint = Серверы получают запросы по очереди.
pool-strategy-prefix-affinity = Привязка по префиксу
pool-strategy-prefix-affinity-hint = Запросы с одинаковым началом идут на один и тот же сервер, чтобы по возможности использовать его кеш промптов.
pool-groups = Допущенные группы
pool-groups-hint = Отметьте группы, участники которых могут пользоваться этим пулом.
pool-groups-everyone = Все
pool-fallback = Резервный пул
pool-fallback-hint = Используется, когда все серверы этого пула недоступны.
pool-fallback-none = Без резерва
pool-backends = Серверы
pool-backends-none = Сначала добавьте сервер.

## How Messages and Responses are served

backend-surfaces = Как обслуживаются Messages и Responses
backend-surfaces-intro = Claude Code и SDK anthropic говорят на API Messages; Codex и responses из SDK openai — на API Responses. Движок, который обслуживает их сам, получает их как есть; любой другой — переведёнными в chat completions и обратно.
backend-surface-messages = Anthropic Messages
backend-surface-responses = OpenAI Responses
backend-surface-auto = Автоматически (напрямую, где движок их обслуживает)
backend-surface-native = Напрямую: передавать движку как есть
backend-surface-translate = Переводить в chat completions
backend-serving-native = { $surface }: передаётся как есть
backend-serving-translated = { $surface }: переводится в chat
backend-surface-new = Определяется при сохранении.
backend-store-responses = Хранить состояние Responses для вызывающих
backend-store-responses-hint = Разрешает движку, который сам обслуживает Responses API, хранить сохранённые ответы и беседы (store, previous_response_id). Каждый сохранённый id остаётся за тем, кто его создал; хранилище движка всё равно содержит тексты всех вызывающих, поэтому включайте только для движка, хранилищу которого вы доверяете. Выключено: шлюз отправляет store: false и отклоняет запросы, которым нужно состояние.

## Лимит одновременных запросов: фиксированный или выученный у движка (max_inflight auto)

backend-concurrency = Лимит одновременных запросов
backend-concurrency-fixed = Фиксированный
backend-concurrency-fixed-hint = Вы задаёте, сколько запросов сервер получает одновременно.
backend-concurrency-auto = Выучен у движка (авто)
backend-concurrency-auto-hint = Лимит следует за собственной очередью ожидания движка, его KV-кэшем и задержкой, всегда между нижней и верхней границей.
backend-capacity-floor = Нижняя граница
backend-capacity-floor-hint = Авто никогда не опускается ниже, даже когда движок заполнен или его метрики устарели.
backend-capacity-ceiling = Верхняя граница
backend-capacity-ceiling-hint = Авто никогда не поднимается выше, сколько бы места ни сообщал движок.
backend-capacity-bounds-invalid = Нижняя граница ({ $floor }) не может быть больше верхней ({ $ceiling }).
capacity-auto = авто
capacity-auto-range = авто ({ $floor }–{ $ceiling })
capacity-not-learned = Выученный лимит пока неизвестен.
capacity-learned = Выученный лимит { $limit }, { $reason }
capacity-reason-metrics = по метрикам движка
capacity-reason-latency = по задержке (без метрик)
capacity-reason-stale = метрики устарели: лимит удерживается
capacity-reason-floor = на нижней границе
capacity-reason-ceiling = на верхней границе
capacity-engine = Движок: выполняется { $running }, ожидает { $waiting }, KV-кэш { $kv }
capacity-engine-unread = Метрики движка ещё не прочитаны.
capacity-kv-unreported = не сообщается
capacity-kv-percent = { $percent } %
capacity-metrics-error = Метрики непригодны: { $error }

## Резерв: последние места, закрытые для более низких классов, пока приходит более высокий

backend-headroom = Резерв
backend-headroom-hint = Пока к этому бэкенду недавно приходил запрос более высокого класса (Настройки: «Резерв действует»), его последние места закрыты для более низких классов; иначе любой класс может занять все места.
backend-headroom-low = Мест закрыто для низкого класса
backend-headroom-medium = Мест закрыто для среднего класса
backend-headroom-order-invalid = Для низкого класса должно быть закрыто не меньше мест ({ $low }), чем для среднего ({ $medium }): более низкий класс уступает первым.
backend-headroom-kept = Оставлено для более высоких классов
backend-headroom-kept-low = { $slots ->
    [one] { $slots } место закрыто для низкого класса
    [few] { $slots } места закрыты для низкого класса
   *[many] { $slots } мест закрыто для низкого класса
}
backend-headroom-kept-medium = { $slots ->
    [one] { $slots } место закрыто для среднего класса
    [few] { $slots } места закрыты для среднего класса
   *[many] { $slots } мест закрыто для среднего класса
}
