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
