# Фильтры активности, подробности записи, данные для подключения новых токенов и цветовая схема.

activityui-page-of = Страница { $page } из { $pages } · { $count ->
    [one] { $count } запись
    [few] { $count } записи
   *[many] { $count } записей
}
activityui-user-placeholder = Начало имени
activityui-model-placeholder = Часть названия
activityui-first-byte = Первый байт
activityui-details = Подробности запроса
activityui-open = Подробности запроса от { $time }
activityui-close = Закрыть
activityui-surface = Интерфейс
activityui-path = Путь
activityui-hint = Подсказка приоритета
activityui-score = Оценка
activityui-input-tokens = Входные токены
activityui-output-tokens = Выходные токены
activityui-cached-tokens = Входные токены из кэша
activityui-error = Ошибка
activityui-record-id = Запись

activityui-expiry = Срок действия
activityui-expiry-never = Бессрочно
activityui-expiry-days = { $days ->
    [one] { $days } день
    [few] { $days } дня
   *[many] { $days } дней
}
activityui-expiry-hint = Токен с истёкшим сроком перестаёт работать; новый можно создать в любой момент.
activityui-models = Модели
activityui-models-hint = Не отмечайте ничего, чтобы токен мог вызывать все модели, разрешённые вашим группам, или отметьте те, что ему можно вызывать.
activityui-models-none = Сейчас для вас не указано ни одной модели; токен сможет вызывать все модели, разрешённые вашим группам.
activityui-connect = Подключить программу
activityui-base-url = Базовый URL
activityui-example = Пример
activityui-example-curl = curl
activityui-example-openai = Python SDK OpenAI
activityui-example-anthropic = Python SDK Anthropic
activityui-example-claude = Claude Code (переменные окружения)
activityui-example-codex = Codex CLI (~/.codex/config.toml)
activityui-example-copy = Копировать пример
error-empty-allowlist = Выберите хотя бы одну модель или ни одной, чтобы разрешить все модели ваших групп.

activityui-theme = Цвета
activityui-theme-system = Системная
activityui-theme-light = Светлая
activityui-theme-dark = Тёмная
