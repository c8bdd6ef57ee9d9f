# Очередь в реальном времени.

queue-title = Очередь
queue-intro = Запросы, ожидающие свободного места на сервере, в том порядке, в котором они его получат.
queue-empty = Ожидающих запросов нет.
queue-priority-off = Приоритизация запросов выключена: все запросы ждут в одном классе в порядке поступления.
queue-depth = Ожидают по классам
queue-waiters = Ожидающие запросы
queue-class = Класс
queue-model = Модель
queue-user = Пользователь
queue-token = Токен
queue-token-session = Браузер (песочница)
queue-age = Ждёт
queue-backends = Серверы
queue-backends-empty = Ни один сервер не работает.
queue-backend = Сервер
queue-health = Состояние

queue-recent = Последние назначения
queue-recent-intro = Последние 20 запросов, получивших место на сервере; сначала самые новые.
queue-recent-empty = С момента запуска шлюза ни один запрос ещё не был назначен.
queue-recent-time = Время
queue-recent-waited = Ожидание в очереди
queue-recent-ago = { $duration } назад

live-connecting = Подключение…
live-connected = В реальном времени
live-polling = Обновление каждые 2 секунды
live-offline = Данные в реальном времени недоступны
